#!/usr/bin/env bash
# Whole-process benchmark of the peripheral: counts per question, not
# times. Two Bumble virtual controllers on one link; our shipped peripheral on
# the first; a Bumble central (Tests/PythonSupport/bench_central.py) on the second
# asks N questions over ONE connection, each a full ITCB cycle (CCCD 0x0001
# Write Request, question Write Request, answer notification, CCCD 0x0000).
# Every figure is measured twice, with N1 and N2 questions, and reported as
# (run N2 - run N1) / (N2 - N1): start-up, connection set-up and shutdown are
# identical in both runs and cancel out.
#
#   instructions  valgrind --tool=callgrind: user-space instructions of the
#                 whole process (Swift runtime, libc and all), judged along
#                 the poll loop's structure (Tests/PythonSupport/bench_figures.py):
#                 per wake-up (a second pair of runs, split: the controller
#                 sends each packet in two pieces, one wake-up more each for
#                 the same packets; its extra instructions over its extra
#                 wake-ups) and per question besides the wake-ups
#                 (the work for its packets); the total moves with how many
#                 packets one wake-up finds, so it is reported, not gated
#   allocations   valgrind --tool=memcheck: "total heap usage: N allocs"
#                 (malloc, calloc, realloc, memalign, new) of the whole process
#   syscalls      strace -f -c: calls by name, judged along the poll loop's
#                 structure (Tests/PythonSupport/bench_figures.py): per wake-up (poll
#                 and the read that drains the transport) and besides the
#                 wake-ups (a write per packet out, the log line); the total
#                 moves with how many packets a wake-up finds (the load), so
#                 it is reported, not gated
#   CPU           plain run: user+system time from /proc/PID/schedstat (ns)
#                 read just before SIGTERM; also for the Bumble 8-Ball
#                 peripheral (Tests/PythonSupport/bumble_8ball.py) with the same
#                 central in the same run, and the ratio ours/Bumble
#   VmHWM         plain run: peak RSS from /proc/PID/status before SIGTERM
#
# Fails (exit 1, one line per budget) when instructions per wake-up or per
# question besides the wake-ups', allocations per question, syscalls per
# wake-up or syscalls per question besides the wake-ups' exceed the budgets below, unless BENCH_REPORT_ONLY=1
# or --report-only. Needs the shipped binary ($ITCB_DONGLE_BIN, else
# .build-embedded/itcb-dongle), valgrind, strace and the Bumble venv
# (scripts/setup.sh). About 2-3 minutes on 2 cores.
#
# Usage: scripts/bench-process.sh [--report-only]
set -uo pipefail
cd "$(dirname "$0")/.."

# Budgets (docs/PERFORMANCE.md). Aim: one syscall per wake-up.
# Instructions per wake-up (poll, read, the loop's pass) and per question besides (the packets' work).
# A wake-up as the split runs measure it: one that finds half a packet and the deframer picks it up again.
MAX_INSTRUCTIONS_PER_WAKEUP=${BENCH_MAX_INSTRUCTIONS_PER_WAKEUP:-1500}
MAX_INSTRUCTIONS_BESIDES=${BENCH_MAX_INSTRUCTIONS_BESIDES:-8000}
MAX_ALLOCATIONS=${BENCH_MAX_ALLOCATIONS:-0}
# Per wake-up: poll and read. Per question besides: the 3 writes out (the answer rides with the question's
# response) and the log line.
MAX_SYSCALLS_PER_WAKEUP=${BENCH_MAX_SYSCALLS_PER_WAKEUP:-2}
MAX_SYSCALLS_BESIDES_WAKEUPS=${BENCH_MAX_SYSCALLS_BESIDES_WAKEUPS:-4}
# The split runs' pause between a packet's two pieces, seconds (longer than a wake-up takes under callgrind).
SPLIT=${BENCH_SPLIT:-0.02}
# Question counts of the two runs: under valgrind (slow) and without (strace, CPU).
VALGRIND_N1=${BENCH_VALGRIND_N1:-100}
VALGRIND_N2=${BENCH_VALGRIND_N2:-300}
PLAIN_N1=${BENCH_PLAIN_N1:-500}
PLAIN_N2=${BENCH_PLAIN_N2:-2500}
# 1: also count the Bumble 8-Ball's instructions under callgrind (slow: minutes).
BUMBLE_CALLGRIND=${BENCH_BUMBLE_CALLGRIND:-0}
REPORT_ONLY=${BENCH_REPORT_ONLY:-0}
[ "${1:-}" = "--report-only" ] && REPORT_ONLY=1
# Extra peripheral flags (e.g. "--log-level warning"); default: the shipped defaults.
EXTRA_FLAGS=${BENCH_PERIPHERAL_FLAGS:-}
# Extra central flags: "--bumble-subscribe" repeats the issue's first measurement
# (Bumble's subscribe()/unsubscribe(): 5 ATT round trips per cycle instead of 3).
CENTRAL_FLAGS=${BENCH_CENTRAL_FLAGS:-}

BIN=${ITCB_DONGLE_BIN:-$PWD/.build-embedded/itcb-dongle}
PY=$PWD/.venv/bin/python
OUT=${BENCH_OUT:-$PWD/.build/bench-process}
NAME=Bench

die() { echo "bench-process: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "no shipped binary at $BIN (scripts/build-embedded.sh)"
[ -x "$PY" ] || die "no Bumble venv at .venv (scripts/setup.sh)"
for tool in valgrind callgrind_annotate strace; do
    command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install valgrind strace)"
done
rm -rf "$OUT"
mkdir -p "$OUT"

# Every process is started in its own process group and recorded; all groups
# are killed on exit, interruption or failure.
groups=()
cleanup() {
    local g
    for g in "${groups[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
    for g in "${groups[@]}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- "-$g" 2>/dev/null || break; sleep 0.2; done
        kill -KILL -- "-$g" 2>/dev/null
    done
    groups=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# start LOG CMD…: runs CMD in a new session (its own process group), output to LOG; sets $started.
start() {
    local log=$1
    shift
    setsid "$@" > "$log" 2>&1 < /dev/null &
    started=$!
    groups+=("$started")
}
# wait_for FILE TEXT COUNT SECONDS PID: until FILE has COUNT lines with TEXT (0 if PID died first).
wait_for() {
    local file=$1 text=$2 count=$3 pid=$5 end=$((SECONDS + $4)) seen
    while ((SECONDS < end)); do
        seen=$(grep -c -- "$text" "$file" 2>/dev/null)
        ((${seen:-0} >= count)) && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# wait_exit PID SECONDS: waits for a child; its exit status, or 124 after SECONDS (then SIGKILL).
wait_exit() {
    local pid=$1 end=$((SECONDS + $2))
    while ((SECONDS < end)) && kill -0 "$pid" 2>/dev/null; do
        [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
        kill -KILL -- "-$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        return 124
    fi
    wait "$pid"
}

# run KIND TOOL N [split]: one measured run. KIND ours|bumble; TOOL callgrind|memcheck|strace|plain;
# split: the peripheral's controller sends each packet as its H4 type byte and, $SPLIT s later, the rest
# (one wake-up more per packet, the same packets). Writes $OUT/KIND-TOOL-N[-split]/ with the peripheral's log, the tool's output and
# stats (cpu_ns, vmhwm_kb of the plain runs). Exits the script on any failure.
run() {
    local kind=$1 tool=$2 n=$3 split=${4:-} pieces=()
    local dir="$OUT/$kind-$tool-$n${split:+-split}" slow=1
    [ -n "$split" ] && pieces=(--split "$SPLIT")
    mkdir -p "$dir"
    printf 'bench-process: %-6s %-9s %5d questions%s … ' "$kind" "$tool" "$n" "${split:+, split}"
    local t0=$SECONDS

    start "$dir/controllers.log" "$PY" Tests/PythonSupport/controllers.py 2 "${pieces[@]}"
    local controllers=$started
    wait_for "$dir/controllers.log" '^PORTS' 1 60 "$controllers" || { echo; cat "$dir/controllers.log"; die "Bumble controllers did not start"; }
    local p1 p2
    read -r _ p1 p2 < <(grep '^PORTS' "$dir/controllers.log")

    local wrap=() cmd=()
    case $tool in
        callgrind) wrap=(valgrind --tool=callgrind --trace-children=no --log-file="$dir/valgrind.log"
                         --callgrind-out-file="$dir/callgrind.out"); slow=20 ;;
        memcheck) wrap=(valgrind --tool=memcheck --trace-children=no --leak-check=no --log-file="$dir/valgrind.log"
                        --xtree-memory=full --xtree-memory-file="$dir/xtmemory.kcg"); slow=20 ;;
        strace) wrap=(strace -f -c -o "$dir/strace.txt"); slow=3 ;;
        plain) ;;
    esac
    local ready
    if [ "$kind" = ours ]; then
        # shellcheck disable=SC2206
        cmd=("$BIN" --role peripheral --transport "tcp:127.0.0.1:$p1" --name "$NAME" --seed 1 $EXTRA_FLAGS)
        # Allocations with the metrics file, as the kiosk's unit runs it (its text is built in
        # a buffer reserved at start). Not under callgrind: its writes come every 15 s of wall
        # time, which the slow split runs have more of, not per question or wake-up.
        [ "$tool" = memcheck ] && cmd+=(--metrics-file "$dir/bench.prom")
        ready=advertising
    else
        cmd=("$PY" Tests/PythonSupport/bumble_8ball.py --transport "tcp-client:127.0.0.1:$p1" --name "$NAME" --seed 1)
        ready=READY
    fi
    start "$dir/peripheral.log" "${wrap[@]}" "${cmd[@]}"
    local leader=$started
    wait_for "$dir/peripheral.log" "$ready" 1 $((30 * slow)) "$leader" \
        || { echo; tail -20 "$dir/peripheral.log"; die "$kind peripheral did not get ready ($tool)"; }
    # The measured process: under strace its child; valgrind runs the guest in its own process.
    local target=$leader
    if [ "$tool" = strace ]; then
        target=$(cat "/proc/$leader/task/$leader/children" 2>/dev/null | awk '{print $1}')
        [ -n "$target" ] || die "no traced child under strace"
    fi

    # shellcheck disable=SC2086
    start "$dir/central.log" "$PY" Tests/PythonSupport/bench_central.py --port "$p2" --name "$NAME" --count "$n" \
        --step $((10 * slow)) $CENTRAL_FLAGS
    local central=$started status=0
    wait_exit "$central" $((60 + n * slow / 5 + 30 * slow + ${#pieces[@]} * n)) || status=$?
    if ((status != 0)) || ! grep -q '^DONE' "$dir/central.log"; then
        echo
        cat "$dir/central.log"
        echo "--- peripheral log (last 20 lines):"
        tail -20 "$dir/peripheral.log"
        die "the central failed (status $status) against the $kind peripheral under $tool"
    fi
    # Identical shutdown in both runs: our peripheral has seen the disconnection
    # (its "disconnected:" line; advertising resumed when the central connected,
    # a debug line) before it is stopped.
    if [ "$kind" = ours ] && [ -z "$EXTRA_FLAGS" ]; then
        wait_for "$dir/peripheral.log" "info: disconnected:" 1 $((10 * slow)) "$leader" \
            || die "our peripheral did not see the disconnection ($tool)"
    fi
    sleep 0.5
    if [ "$tool" = plain ]; then
        awk '{print $1}' "/proc/$target/schedstat" > "$dir/cpu_ns"
        awk '/^VmHWM:/ {print $2}' "/proc/$target/status" > "$dir/vmhwm_kb"
        awk '{print $14 + $15}' "/proc/$target/stat" > "$dir/cpu_ticks"
    fi
    kill -TERM "$target" 2>/dev/null
    status=0
    wait_exit "$leader" $((10 * slow + 10)) || status=$?
    if [ "$kind" = ours ] && ((status != 0)); then
        tail -20 "$dir/peripheral.log"
        die "our peripheral did not exit 0 on SIGTERM (status $status, $tool)"
    fi
    kill -TERM -- "-$controllers" 2>/dev/null
    wait_exit "$controllers" 10 >/dev/null 2>&1
    echo "$((SECONDS - t0)) s"
}

# Measurements per (kind, tool, n), extracted from the run folders.
instructions() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$OUT/$1-callgrind-$2/callgrind.out" | head -1; }
# profile N[-split]: the callgrind figures of our run (instructions, poll calls) as JSON.
profile() { "$PY" Tests/PythonSupport/callgrind_profile.py "$OUT/ours-callgrind-$1/callgrind.out" poll; }
allocations() {
    sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$OUT/$1-memcheck-$2/valgrind.log" | tr -d , | head -1
}

echo "bench-process: $BIN"
run ours callgrind "$VALGRIND_N1"
run ours callgrind "$VALGRIND_N2"
run ours callgrind "$VALGRIND_N1" split
run ours callgrind "$VALGRIND_N2" split
run ours memcheck "$VALGRIND_N1"
run ours memcheck "$VALGRIND_N2"
for kind in ours bumble; do
    for tool in strace plain; do
        run "$kind" "$tool" "$PLAIN_N1"
        run "$kind" "$tool" "$PLAIN_N2"
    done
done
if [ "$BUMBLE_CALLGRIND" = 1 ]; then
    run bumble callgrind "$VALGRIND_N1"
    run bumble callgrind "$VALGRIND_N2"
fi

# Where the cost goes, from the longer runs (start-up included, about a tenth):
# callgrind by self and inclusive cost and with each function's callers, and
# the allocation call trees (memcheck --xtree-memory, by blocks allocated);
# Swift names demangled when `swift demangle` is there.
readable() { if command -v swift >/dev/null; then swift demangle --simplified; else cat; fi; }
profile=$OUT/ours-callgrind-$VALGRIND_N2/callgrind.out
callgrind_annotate "$profile" 2>/dev/null | readable > "$OUT/callgrind-self.txt"
callgrind_annotate --inclusive=yes "$profile" 2>/dev/null | readable > "$OUT/callgrind-inclusive.txt"
callgrind_annotate --tree=caller "$profile" 2>/dev/null | readable > "$OUT/callgrind-callers.txt"
callgrind_annotate --inclusive=yes --sort=totBk "$OUT/ours-memcheck-$VALGRIND_N2/xtmemory.kcg" 2>/dev/null \
    | readable > "$OUT/allocations-inclusive.txt"
echo
echo "bench-process: the 5 costliest functions by self cost ($VALGRIND_N2-question run), each with its top callers:"
sed -n '/file:function/,$p' "$OUT/callgrind-self.txt" | grep '^ *[0-9]' | head -5 | while read -r cost _ where; do
    fn=${where#*:}
    fn=${fn% \[*}
    printf '  %s  %s\n' "$cost" "$fn" | cut -c1-160
    # The caller block of this function in the --tree=caller listing: "< caller" lines before its "*" line.
    awk -v fn="$fn" 'BEGIN { RS = "" } {
            n = split($0, line, "\n")
            for (i = 1; i <= n; i++) if (index(line[i], "*  ") && index(line[i], fn)) { print; exit }
        }' "$OUT/callgrind-callers.txt" \
        | grep ' < ' | sed 's/,//g' | sort -k1,1nr | head -3 | sed 's/^ *\([0-9]*\) [^<]*< /      \1 from /; s/ \[[^]]*\]$//' | cut -c1-160
done

export OUT VALGRIND_N1 VALGRIND_N2 PLAIN_N1 PLAIN_N2 MAX_INSTRUCTIONS_PER_WAKEUP MAX_INSTRUCTIONS_BESIDES MAX_ALLOCATIONS REPORT_ONLY
export MAX_SYSCALLS_PER_WAKEUP MAX_SYSCALLS_BESIDES_WAKEUPS
export P1=$(profile "$VALGRIND_N1") P2=$(profile "$VALGRIND_N2") PS1=$(profile "$VALGRIND_N1-split") PS2=$(profile "$VALGRIND_N2-split")
export A1=$(allocations ours "$VALGRIND_N1") A2=$(allocations ours "$VALGRIND_N2")
export BI1="" BI2=""
if [ "$BUMBLE_CALLGRIND" = 1 ]; then
    BI1=$(instructions bumble "$VALGRIND_N1")
    BI2=$(instructions bumble "$VALGRIND_N2")
fi
PYTHONPATH=Tests/PythonSupport "$PY" - <<'PYTHON'
import json
import os

from bench_figures import instruction_failures, instruction_lines, instruction_structure, listing, per_question as difference, strace_table, syscall_structure

env = os.environ
out = env["OUT"]
v1, v2 = int(env["VALGRIND_N1"]), int(env["VALGRIND_N2"])
p1, p2 = int(env["PLAIN_N1"]), int(env["PLAIN_N2"])


def read(kind, tool, n, name):
    with open(f"{out}/{kind}-{tool}-{n}/{name}") as f:
        return f.read()


def per_question(kind):
    """-> (syscalls by name per question, CPU µs per question, peak RSS MB)."""
    by_name = difference(strace_table(read(kind, "strace", p1, "strace.txt"))[0],
                         strace_table(read(kind, "strace", p2, "strace.txt"))[0], p1, p2)
    cpu = difference(int(read(kind, "plain", p1, "cpu_ns")), int(read(kind, "plain", p2, "cpu_ns")), p1, p2) / 1000
    hwm = max(int(read(kind, "plain", n, "vmhwm_kb")) for n in (p1, p2)) / 1024
    return by_name, cpu, hwm


p1_, p2_ = json.loads(env["P1"]), json.loads(env["P2"])
i1, i2 = p1_["instructions"], p2_["instructions"]
a1, a2 = (int(env[k]) for k in ("A1", "A2"))
# Wake-ups (poll calls) under callgrind: the slowed-down peripheral finds more
# packets per wake-up than at full speed; the total moves with that, its two parts do not.
loop = instruction_structure(p1_, p2_, v1, v2, split=(json.loads(env["PS1"]), json.loads(env["PS2"])))
instr = loop["total"]
allocs = difference(a1, a2, v1, v2)
names_ours, cpu_ours, hwm_ours = per_question("ours")
names_bumble, cpu_bumble, hwm_bumble = per_question("bumble")
sys_bumble = sum(names_bumble.values())
# Along the loop's structure: per wake-up a poll and the read that drains the transport.
structure = syscall_structure(names_ours, names_ours.get("read", 0.0))
sys_ours = structure["total"]
bumble_instr = None
if env.get("BI1") and env.get("BI2"):
    bumble_instr = difference(int(env["BI1"]), int(env["BI2"]), v1, v2)


print()
print(f"whole process, per question (run of N2 minus run of N1 questions, one connection;")
print(f"valgrind runs {v1}/{v2} questions, strace and CPU runs {p1}/{p2}):")
print(f"  instructions (callgrind)   {instr:>12,.0f}   ({i1:,} and {i2:,} in all)")
print("\n".join(instruction_lines(loop, "poll, read and the loop's pass")))
print(f"  heap allocations (memcheck){allocs:>12,.2f}   ({a1:,} and {a2:,} in all)")
print(f"  syscalls (strace -f -c)    {sys_ours:>12.1f}   {listing(names_ours)}")
print(f"    per wake-up              {structure['per_wakeup']:>12.2f}   poll and read")
print(f"    besides the wake-ups     {structure['besides_wakeups']:>12.2f}   the writes out, the log line")
wakes_callgrind = loop["wakeups"]
wakes_strace = structure["wakeups"]
print(f"  poll calls (wake-ups)      {wakes_callgrind:>12.1f}   under callgrind; {wakes_strace:.1f} at full speed (strace):"
      f" instructions spent per wake-up count {wakes_callgrind:.1f} times")
print(f"  CPU user+system            {cpu_ours:>10.1f} µs")
print(f"  peak RSS (VmHWM)           {hwm_ours:>10.1f} MB")
print()
print("                         itcb-dongle   Bumble 8-Ball   ours/Bumble   budget   BTstack (2026-11-23)")
bi = f"{bumble_instr:,.0f}" if bumble_instr is not None else "-"
ratio = f"{instr / bumble_instr:.3f}" if bumble_instr else "-"
print(f"  instructions/question {instr:>13,.0f}  {bi:>14}  {ratio:>12}"
      f"   {'-':>6}   63,000")
print(f"  allocations/question  {allocs:>13,.2f}  {'-':>14}  {'':>12}   {int(env['MAX_ALLOCATIONS']):>6}")
print(f"  syscalls/question     {sys_ours:>13.1f}  {sys_bumble:>14.1f}  {sys_ours / sys_bumble:>12.2f}"
      f"   {'-':>6}   86")
print(f"  CPU µs/question       {cpu_ours:>13.1f}  {cpu_bumble:>14.1f}  {cpu_ours / cpu_bumble:>12.3f}")
print(f"  peak RSS (VmHWM) MB   {hwm_ours:>13.1f}  {hwm_bumble:>14.1f}  {hwm_ours / hwm_bumble:>12.3f}            1.7")
print(f"  Bumble syscalls: {listing(names_bumble)}")
print()
print(f"details: {out}/callgrind-{{self,inclusive,callers}}.txt (cost by function), allocations-inclusive.txt")
print(f"         (allocation call trees), {out}/KIND-TOOL-N/ (each run's logs and tool outputs)")

failures = []
# Instructions along the loop's structure: a wake-up's and the packets' (the total is not gated).
failures += instruction_failures(loop, int(env["MAX_INSTRUCTIONS_PER_WAKEUP"]), int(env["MAX_INSTRUCTIONS_BESIDES"]),
                                 "poll, read and the loop's pass")
if a2 - a1 > int(env["MAX_ALLOCATIONS"]) * (v2 - v1):
    failures.append(f"the steady state allocates: {a2 - a1:,} more heap allocations for {v2 - v1} more questions "
                    f"({allocs:.2f} per question; budget {env['MAX_ALLOCATIONS']})")
# Each part a count that repeats whatever the load; 0.1: a stray call in one of the two runs is 1/2,000 a question.
if structure["per_wakeup"] > float(env["MAX_SYSCALLS_PER_WAKEUP"]) + 0.1:
    failures.append(f"{structure['per_wakeup']:.2f} syscalls per wake-up exceed the budget of"
                    f" {env['MAX_SYSCALLS_PER_WAKEUP']} (poll and read)")
if structure["besides_wakeups"] > float(env["MAX_SYSCALLS_BESIDES_WAKEUPS"]) + 0.1:
    failures.append(f"{structure['besides_wakeups']:.2f} syscalls per question besides the wake-ups' exceed the"
                    f" budget of {env['MAX_SYSCALLS_BESIDES_WAKEUPS']} (the writes out and the log line)")
with open(f"{out}/failures", "w") as f:
    f.write("".join(line + "\n" for line in failures))
PYTHON
[ -f "$OUT/failures" ] || die "could not compute the figures"
if [ -s "$OUT/failures" ]; then
    sed 's/^/bench-process: FAIL: /' "$OUT/failures"
    if [ "$REPORT_ONLY" = 1 ]; then
        echo "bench-process: report only (BENCH_REPORT_ONLY=1 / --report-only): not failing"
        exit 0
    fi
    exit 1
fi
echo "bench-process: within budget (instructions, allocations per question; syscalls per wake-up and besides)"
