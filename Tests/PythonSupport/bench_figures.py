"""The benches' arithmetic, written once for scripts/bench-process.sh (TCP)
and Tests/USBFixture/bench_usb.py (scripts/bench-usb.sh, USB).

Every figure comes from two runs of N1 and N2 questions over one connection
and is (run of N2 - run of N1) / (N2 - N1): start-up, connection set-up,
disconnection and shutdown are the same in both and cancel out.

Syscalls are judged by the structure of the poll loop, not as a total: a
total moves with how many packets one wake-up finds, which depends on the
machine's load, not on the code. Each wake-up is one `poll` plus the one call
that drains the input (TCP: the `read`; USB: the reap loop's final
`EAGAIN` ioctl); everything else is spent per packet (TCP: a `write` per
packet out; USB: a submit and a reap per transfer) or per question (the log
line). Both parts are counts that repeat from run to run.

Instructions are judged the same way on TCP, with a second pair of runs,
split: the same questions, the peripheral's controller sending each packet in
two pieces with a pause between (the H4 type byte, then the rest), so each
packet costs one wake-up more. Same questions, same packets: the instructions per question the split
pair spends more, divided by the wake-ups per question it has more, are what one wake-up costs (the wait, the
loop's pass); the total per question less that cost times its wake-ups is the
work done for the question's packets, whichever wake-up found them. The
total is reported, not gated. On USB no transfer can be cut (a short packet
ends the packet: USB 2.0 §5.8.3) and every transfer is already its own
wake-up when the process keeps up, so no pair of runs can add wake-ups: the
total is judged against both budgets at its wake-ups (the budget besides
plus the budget per wake-up times the wake-ups), a limit that follows the
wake-ups as they move with the load.
"""


def per_question(short, long, n1, n2):
    """(long - short) / (n2 - n1) for numbers, or name by name for dicts of them, nested or not
    (a name missing from one run counts 0; the result is ordered by the larger difference first)."""
    if isinstance(short, dict) or isinstance(long, dict):
        figures = {k: per_question(short.get(k, 0), long.get(k, 0), n1, n2) for k in set(short) | set(long)}
        return dict(sorted(figures.items(), key=lambda kv: -kv[1] if not isinstance(kv[1], dict) else 0))
    return (long - short) / (n2 - n1)


def strace_table(text):
    """The summary table of `strace -c` (the last one in `text`) -> ({syscall: calls}, {syscall: errors})."""
    lines = text.splitlines()
    header = max((i for i, line in enumerate(lines) if line.startswith("% time")), default=None)
    if header is None:
        raise ValueError("no strace -c summary table")
    calls, errors = {}, {}
    for line in lines[header + 1:]:
        fields = line.split()
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
            errors[fields[-1]] = int(fields[4]) if len(fields) == 6 else 0
    return calls, errors


def syscall_structure(calls, drains, leave_out=()):
    """Per-question syscalls by name (`calls`) split along the loop's structure.
    drains: the calls per question that drain the input once per wake-up.
    -> {"total", "wakeups" (poll calls), "per_wakeup", "besides_wakeups"}; names in
    `leave_out` (e.g. clock_gettime, a real syscall only in the USB guest) are not counted."""
    total = sum(v for k, v in calls.items() if k not in leave_out)
    wakeups = calls.get("poll", 0.0)
    woke = wakeups + drains
    return {"total": total, "wakeups": wakeups, "per_wakeup": woke / wakeups if wakeups else 0.0,
            "besides_wakeups": total - woke}


def instruction_structure(short, long, n1, n2, split=None):
    """callgrind_profile.py figures of the runs of N1 and N2 questions, and of the split pair (split_short,
    split_long) where packets can be split -> {"total", "wakeups", "split_wakeups" (per question),
    "per_wakeup" (instructions), "besides_wakeups" (instructions per question)}. Each pair gives a cost per
    question and wake-ups per question with start-up cancelled; the split pair's extra cost over its extra
    wake-ups is one wake-up's. Without a split pair (USB: a transfer cannot be cut without ending its packet),
    or should the split runs not wake up at least 0.1 a question more (pieces that arrived together: a pause
    too short for the machine), the two costs are not told apart: per_wakeup and besides_wakeups are None,
    and instruction_failures judges the total against both budgets at its wake-ups."""
    total = per_question(short["instructions"], long["instructions"], n1, n2)
    wakeups = per_question(short["calls"]["poll"], long["calls"]["poll"], n1, n2)
    figures = {"total": total, "wakeups": wakeups, "split_wakeups": None, "per_wakeup": None, "besides_wakeups": None}
    if split is None:
        return figures
    split_total = per_question(split[0]["instructions"], split[1]["instructions"], n1, n2)
    figures["split_wakeups"] = per_question(split[0]["calls"]["poll"], split[1]["calls"]["poll"], n1, n2)
    if figures["split_wakeups"] - wakeups >= 0.1:
        figures["per_wakeup"] = (split_total - total) / (figures["split_wakeups"] - wakeups)
        figures["besides_wakeups"] = total - figures["per_wakeup"] * wakeups
    return figures


def instruction_failures(figures, max_per_wakeup, max_besides, what):
    """The budget lines `figures` (instruction_structure's) break: the two parts each, or, when they were not
    told apart, the total against max_besides + max_per_wakeup x its wake-ups. `what`: a wake-up's parts."""
    if figures["per_wakeup"] is None:
        allowed = max_besides + max_per_wakeup * figures["wakeups"]
        if figures["total"] > allowed:
            return [f"{figures['total']:,.0f} instructions per question exceed {max_besides:,} besides the wake-ups"
                    f" and {max_per_wakeup:,} for each of its {figures['wakeups']:.1f} wake-ups ({allowed:,.0f})"]
        return []
    failures = []
    if figures["per_wakeup"] > max_per_wakeup:
        failures.append(f"{figures['per_wakeup']:,.0f} instructions per wake-up exceed the budget of"
                        f" {max_per_wakeup:,} ({what})")
    if figures["besides_wakeups"] > max_besides:
        failures.append(f"{figures['besides_wakeups']:,.0f} instructions per question besides the wake-ups' exceed"
                        f" the budget of {max_besides:,}")
    return failures


def instruction_lines(figures, what, unsplit_why=""):
    """The report's two lines under the total: the cost of a wake-up and the packets' work, or why they were
    judged together (`unsplit_why`: why no split pair was run)."""
    if figures["per_wakeup"] is None:
        why = unsplit_why or (f"the split pair did not wake up more than the whole one"
                              f" ({figures['split_wakeups']:.1f} and {figures['wakeups']:.1f} a question)")
        return [f"    per wake-up / besides       judged together ({why}): the total against both budgets at its"
                f" {figures['wakeups']:.1f} wake-ups"]
    return [f"    per wake-up             {figures['per_wakeup']:>13,.0f}   {what}: the split pair's extra"
            f" instructions over its extra wake-ups",
            f"    besides the wake-ups    {figures['besides_wakeups']:>13,.0f}   the work for the question's packets"
            f" ({figures['wakeups']:.1f} wake-ups a question, {figures['split_wakeups']:.1f} split; the total moves"
            f" with how many packets one wake-up finds, these two do not)"]


def listing(by_name, leave_out=()):
    """'ioctl 31.5, poll 9.5, write 1.0': the names that moved by 0.05 or more per question."""
    return ", ".join(f"{k} {v:.1f}" for k, v in by_name.items() if abs(v) >= 0.05 and k not in leave_out)
