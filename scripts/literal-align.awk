# Give Swift's string literals byte alignment in a module's IR before LLVM optimises it.
#   awk -f scripts/literal-align.awk MODULE.ll MODULE.ll > MODULE.aligned.ll   (the file twice)
#
# Why: swiftc emits each literal as a private [N x i8] constant with no alignment, and
# LLVM gives every such global over 16 bytes its preferred 16-byte alignment
# (DataLayout::getPreferredAlign), so .rodata was 6 KB of padding between literals.
# C's literals are `align 1`. Done before LLVM's passes, which would otherwise rely on
# the 16 (a memcpy from a literal becomes movaps); here nothing has yet, and the check
# below fails the build if an instruction claims more than byte alignment of a literal.
# A literal's address taken as an integer (a String's storage word) claims nothing.
# The check reads one instruction at a time: a pointer derived from a literal on
# another line (a getelementptr, a phi) is not followed; in swiftc's IR every such
# use is a byte load (`align 1`; every use traced, 2026-11-29). A literal written
# in a form the pattern does not know fails the build too, rather than staying padded.
BEGIN { name = "@(\"[^\"]*\"|[-A-Za-z0-9_.$]+)" }  # a global's name, quoted or not
function name_at(s) { return match(s, "^" name) ? substr(s, 1, RLENGTH) : "" }
NR == FNR {
    if ($0 ~ ("^" name " = private unnamed_addr constant \\[[0-9]+ x i8\\] (c\"[^\"]*\"|zeroinitializer)$"))
        literal[name_at($0)] = 1
    next
}
/^ / && /align ([2-9]|[0-9][0-9]+)/ {
    rest = $0
    gsub("ptrtoint \\(ptr " name " to i64\\)", "", rest)
    while (match(rest, name)) {
        ref = substr(rest, RSTART, RLENGTH)
        rest = substr(rest, RSTART + RLENGTH)
        if (ref in literal) {
            printf "literal-align.awk: %s:%d claims alignment of %s\n", FILENAME, FNR, ref > "/dev/stderr"
            exit 1
        }
    }
}
/^@/ && (name_at($0) in literal) { print $0 ", align 1"; next }
/^@/ && / = private unnamed_addr constant \[[0-9]+ x i8\] / && !/, align [0-9]+$/ {
    printf "literal-align.awk: %s:%d: a literal in a form this script does not know\n", FILENAME, FNR > "/dev/stderr"
    exit 1
}
{ print }
