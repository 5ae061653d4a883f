#!/usr/bin/env bash
# Measures the core's steady state: time per question through Host +
# EightBallPeripheral (Bench/CoreBench.swift), then, under valgrind, the
# instructions per question (callgrind: repeatable, unlike seconds) and heap
# usage for 1,000 and 2,000 questions — equal allocation counts show that the
# steady state allocates nothing. Fails when the steady state
# allocates or costs more than MAX_CORE_INSTRUCTIONS per question (counts, not
# times: repeatable under valgrind); BENCH_REPORT_ONLY=1 only prints.
# Usage: scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_CORE_INSTRUCTIONS=${BENCH_MAX_CORE_INSTRUCTIONS:-8000}
out=.build/bench
make -s --no-print-directory core-bench  # the Makefile's BENCH_FLAGS: -O, whole-module
"$out/core-bench" 200000
if ! command -v valgrind >/dev/null; then
    echo "bench: valgrind not installed (apt-get install valgrind) — no instruction or allocation figures"
    exit 0
fi
allocs() {
    valgrind --tool=memcheck "$out/core-bench" "$1" 2>&1 >/dev/null | sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,
}
a1=$(allocs 1000)
a2=$(allocs 2000)
echo "heap allocations: $a1 for 1,000 questions, $a2 for 2,000"
for n in 1000 2000; do
    valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.$n" "$out/core-bench" "$n" >/dev/null 2>&1
done
i1=$(callgrind_annotate "$out/callgrind.1000" 2>/dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
i2=$(callgrind_annotate "$out/callgrind.2000" 2>/dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
per_question=$(( (i2 - i1) / 1000 ))
echo "instructions per question (callgrind): $per_question (budget $MAX_CORE_INSTRUCTIONS)"
status=0
if [ "$a1" != "$a2" ]; then
    echo "bench: FAIL: the steady state allocates ($a1 vs $a2 allocations)"
    status=1
else
    echo "bench: steady state allocation-free"
fi
if ((per_question > MAX_CORE_INSTRUCTIONS)); then
    echo "bench: FAIL: $per_question instructions per question exceed the budget of $MAX_CORE_INSTRUCTIONS"
    status=1
fi
if ((status)) && [ "${BENCH_REPORT_ONLY:-0}" = 1 ]; then
    echo "bench: report only (BENCH_REPORT_ONLY=1): not failing"
    status=0
fi
exit $status
