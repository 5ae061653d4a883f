/// The program's version, as `--version` prints it. It must equal the VERSION
/// file at the repository root (what the Debian package is named after):
/// Tests/ITCBDongleTests checks that, and scripts/build-deb.sh refuses to
/// package a binary whose `--version` differs. Bump both together.
let itcbDongleVersion = "0.2.0"
