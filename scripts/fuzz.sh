#!/usr/bin/env bash
# Builds the libFuzzer targets of Fuzz/ over the core (BLEHost, EightBall) and the
# vendor drivers (Chipsets: targets 3, 6, 7, 10 and 11) with
# AddressSanitizer and runs them. Usage: scripts/fuzz.sh [SECONDS] [TARGET]
# (default 30 s, all targets, then the Realtek (6), Intel (7), USB descriptor
# (8), transmit-pressure (9), Broadcom .hcd (10) and MediaTek RAM code (11) targets
# SECONDS each on their own: 7 x SECONDS in all; TARGET is a number of
# Fuzz/FuzzTargets.swift's list, e.g. 5 for USB transfers, run alone with its own corpus).
# Fails on any crash, trap or sanitizer report; the reproducer lands in .build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
target=${2:-}
out=.build/fuzz
corpus="$out/corpus${target:+-$target}"
mkdir -p "$corpus"
# The Makefile's fuzzer (FUZZ_FLAGS); a build that fails must not leave the last one's binary to run.
rm -f "$out/fuzz-core"
make -s --no-print-directory fuzzer 2>&1 | grep -v -e "warning:" -e "ld.gold: warning" -e "^$" || true
[ -x "$out/fuzz-core" ] || { echo "fuzz: build failed"; exit 1; }
# The vendor file targets (6 Realtek, 7 Intel, 10 Broadcom, 11 MediaTek) take whole files: their corpus
# is seeded from the real Debian files under .cache/firmware-debian
# (scripts/firmware-files.sh), a selector byte before each; nothing is committed.
firmware=.cache/firmware-debian/lib/firmware
seeds() {  # seeds TARGET: the seed directory (built once), or nothing
    local t=$1 dir="$out/seeds-$1" files=()
    case $t in
        6) files=("$firmware"/rtl_bt/*.bin) ;;
        7) files=("$firmware"/intel/ibt-0040-*.sfi "$firmware"/intel/ibt-0041-*.sfi "$firmware"/intel/ibt-1040-*.sfi
                  "$firmware"/intel/ibt-18-16-1.sfi "$firmware"/intel/ibt-19-0-4.sfi "$firmware"/intel/ibt-*.ddc) ;;
        10) files=("$firmware"/brcm/*.hcd) ;;
        11) files=("$firmware"/mediatek/BT_RAM_CODE_*.bin "$firmware"/mediatek/mt7925/BT_RAM_CODE_*.bin) ;;
        8) mkdir -p "$dir"  # the emulated dongle's configuration descriptor (Tests/USBFixture), full speed
           printf '\x08\x09\x02\x27\x00\x01\x01\x00\xc0\x32\x09\x04\x00\x00\x03\xe0\x01\x01\x00\x07\x05\x81\x03\x10\x00\x01\x07\x05\x82\x02\x40\x00\x00\x07\x05\x02\x02\x40\x00\x00' > "$dir/fixture-dongle"
           echo "$dir"; return 0 ;;
        9) mkdir -p "$dir"  # a livelock the driver once had: one ACL buffer, 20 Pairing Requests, the Answer CCCD on, a question
           { printf '\x09\x00'; for _ in $(seq 20); do printf '\x03'; done; printf '\x02\x03\x02\x02\x03abc'; } > "$dir/full-queue-answer"
           echo "$dir"; return 0 ;;
        *) return 0 ;;
    esac
    [ -e "${files[0]}" ] || { echo "fuzz: no Debian firmware under $firmware (scripts/firmware-files.sh); target $t starts from nothing" >&2; return 0; }
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir"
        for f in "${files[@]}"; do
            [ -f "$f" ] && { printf "\\x$(printf %02x "$t")"; cat "$f"; } > "$dir/$(basename "$f")"
        done
    fi
    echo "$dir"
}
maxlen() { case $1 in 6|10) echo 131072 ;; 7|11) echo 1048576 ;; *) echo 600 ;; esac; }
run() {  # run TARGET-or-empty SECONDS
    local t=$1 secs=$2 dir="$out/corpus${1:+-$1}" seed
    mkdir -p "$dir"
    seed=$(seeds "$t")
    # Crash reports come from ASan/libFuzzer; Swift's own backtracer would only slow them down.
    SWIFT_BACKTRACE=enable=no FUZZ_TARGET="$t" "$out/fuzz-core" -max_total_time="$secs" -max_len="$(maxlen "$t")" -timeout=10 \
        -rss_limit_mb=4096 -artifact_prefix="$out/" -print_final_stats=1 "$dir" $seed 2>&1 | tail -n 12
    echo "fuzz: no crash in ${secs} s${t:+ (target $t)}"
}
if [ -n "$target" ]; then
    run "$target" "$seconds"
else
    # Every target by the first byte, then each of the file and descriptor
    # targets and the driver's under a filling transmit queue (a script of
    # many steps, slower per input) on its own for as long (the test command: 7 x 30 s).
    run "" "$seconds"
    run 6 "$seconds"
    run 7 "$seconds"
    run 8 "$seconds"
    run 9 "$seconds"
    run 10 "$seconds"
    run 11 "$seconds"
fi
