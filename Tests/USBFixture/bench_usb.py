"""The USB process benchmark's runs (scripts/bench-usb.sh, which documents the
method, the figures and the budgets; this file does the work).

Boots one guest of the USB fixture (fixture.Guest: QEMU, dummy_hcd, the
emulated CSR dongle whose controller is controller 0 of a Bumble link on the
host), then for each measured run: starts the peripheral in the guest on
`--transport usb` under the run's tool, waits until it advertises, runs the
Bumble central (Tests/PythonSupport/bench_central.py) on the host against the link's
controller 1 for N question cycles over one connection, waits until the
peripheral advertises again, stops it with SIGTERM and copies the run's folder
to OUT/KIND-TOOL-N/. btusb is bound again before every run, so every run
starts from the same state (our binary detaches it, as on a kiosk).

Writes OUT/results.json and prints the report; exits 1 when a budget is
exceeded (unless --report-only), 2 when a measurement of ours failed.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(REPO, "Tests", "PythonSupport")]
from bench_figures import instruction_failures, instruction_lines, instruction_structure, listing, per_question, strace_table, syscall_structure  # noqa: E402
from fixture import Guest, Link  # noqa: E402
from harness import stop_process  # noqa: E402

NAME = "Bench"
SYSCALL_SLACK = 0.1
SITE_SKIP = ("pip", "setuptools", "_pytest", "pytest", "libusb_package", "__pycache__")


class RunFailed(Exception):
    pass


def log(text, end="\n"):
    print(text, end=end, flush=True)


def rebind_btusb(guest):
    """btusb holds the dongle before every run, as at boot (a killed Bumble may leave it unbound)."""
    guest.check("[ -e /sys/class/bluetooth/hci0 ] && [ -e /sys/bus/usb/devices/1-1:1.0/driver ] ||"
                " echo 1-1:1.0 > /sys/bus/usb/drivers/btusb/bind 2>/dev/null; wait_btusb", timeout=60)


def copy_site_packages(work):
    """The Bumble venv's packages for the guest's python3 (the host's /usr/bin/python3, 3.11 like the venv).
    libusb_package is left out: Bumble's usb transport then loads the system libusb-1.0.so.0, ours."""
    site = None
    venv = os.path.join(REPO, ".venv", "lib")
    for entry in sorted(os.listdir(venv)):
        candidate = os.path.join(venv, entry, "site-packages")
        if os.path.isdir(os.path.join(candidate, "bumble")):
            site = candidate
    if site is None:
        raise RunFailed("no bumble in .venv")
    venv_version = os.path.basename(os.path.dirname(site))
    guest_version = subprocess.run(["/usr/bin/python3", "-c", "import sys; print(f'python{sys.version_info[0]}."
                                    "{sys.version_info[1]}')"], capture_output=True, text=True).stdout.strip()
    if venv_version != guest_version:
        raise RunFailed(f"the venv is {venv_version}, the guest's /usr/bin/python3 is {guest_version or 'missing'}:"
                        " its compiled packages (cryptography, cffi) would not load")
    target = os.path.join(work, "pylib")
    os.makedirs(target, exist_ok=True)
    for entry in os.listdir(site):
        if entry.startswith(SITE_SKIP) or entry.endswith(".pth"):
            continue
        source = os.path.join(site, entry)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(target, entry), symlinks=True)
        else:
            shutil.copy(source, target)
    shutil.copy(os.path.join(REPO, "Tests", "PythonSupport", "bumble_8ball.py"), work)


def run(guest, link, out, kind, tool, n, args):
    """One measured run; its files end up in OUT/KIND-TOOL-N/. Raises RunFailed."""
    name = f"{kind}-{tool}-{n}"
    d = f"run/{name}"
    # Time limits scale with the tool's slow-down (Python under callgrind under TCG: over 8 minutes to start).
    slow = {("ours", "callgrind"): 8, ("bumble", "callgrind"): 40}.get((kind, tool), 3)
    log(f"bench-usb: {kind:<6} {tool:<9} {n:4d} questions … ", end="")
    t0 = time.time()
    rebind_btusb(guest)
    if tool == "callgrind":
        wrap = (f"valgrind --tool=callgrind --trace-children=no --log-file={d}/valgrind.log"
                f" --callgrind-out-file={d}/callgrind.out")
    else:
        wrap = ""  # strace attaches once the peripheral is ready (below)
    if kind == "ours":
        command = f"./itcb-dongle --role peripheral --transport usb --name {NAME} --seed 1 {args.peripheral_flags}"
        ready = "advertising"
    else:
        wrap = f"PYTHONPATH=/mnt/work/pylib PYTHONHASHSEED=0 {wrap}"
        command = f"python3 bumble_8ball.py --transport usb:0a12:0001 --name {NAME} --seed 1"
        ready = "READY"
    if tool == "strace" and os.path.exists(os.path.join(guest.work, "alloc_count.so")):
        # The allocation counter (alloc_count.c) too: full speed, by caller; Bumble's only allocation figure.
        wrap = f"ALLOC_COUNT_FILE=/tmp/{name}.allocs LD_PRELOAD=/mnt/work/alloc_count.so {wrap}"
    guest.check(f"mkdir -p {d}; ( {wrap} {command} > {d}/peripheral.log 2>&1 & echo $! > {d}/pid; wait $!;"
                f" echo $? > {d}/rc ) > /dev/null 2>&1 & sleep 0.2")
    host_dir = os.path.join(guest.work, d)

    def text(file):
        try:
            with open(os.path.join(host_dir, file), errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_for(file, what, count, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if text(file).count(what) >= count:
                return True
            if text("rc").strip() or guest.runner.poll() is not None:
                return False
            time.sleep(0.2)
        return False

    def fail(why):
        log("")
        tail = "\n".join(text("peripheral.log").splitlines()[-15:])
        raise RunFailed(f"{why} ({kind}, {tool}, {n} questions); peripheral log:\n{tail}")

    if not wait_for("peripheral.log", ready, 1, 60 * slow):
        fail("the peripheral did not get ready")
    if tool == "strace":
        # Attached to every thread once the peripheral is ready, so its start-up is neither traced nor slowed
        # down (under strace, Python's imports over 9p take minutes); -C: the summary table (calls by name)
        # and the calls themselves (which ioctls: USBDEVFS_SUBMITURB), written to the guest's tmpfs, not 9p.
        code, output = guest.run(
            f"p=$(cat {d}/pid); strace -f -C -o /tmp/{name}.strace -p $p > {d}/strace.log 2>&1 & echo $! > {d}/strace.pid;"
            " for i in $(seq 100); do traced=1; for t in /proc/$p/task/*; do"
            " grep -q '^TracerPid:[[:space:]]*0$' $t/status && traced=0; done; [ $traced = 1 ] && break; sleep 0.1; done;"
            " [ $traced = 1 ] || exit 1;"
            # The allocation counter as it stands at the start of the measured window: its start-up (Python's
            # imports: tens of thousands of allocations, not the same twice) is left out like strace's.
            f" a=/tmp/{name}.allocs.$p; [ ! -e $a ] || cp $a {d}/allocs-ready.bin", timeout=60)
        if code != 0:
            fail(f"strace did not attach: {output.strip()} {text('strace.log').strip()}")
    os.makedirs(os.path.join(out, name), exist_ok=True)
    with open(os.path.join(out, name, "central.log"), "w") as central_log:
        central = subprocess.Popen(
            [os.path.join(REPO, ".venv", "bin", "python"), os.path.join(REPO, "Tests", "PythonSupport", "bench_central.py"),
             "--port", str(link.ports[1]), "--name", NAME, "--count", str(n), "--step", str(10 * slow)],
            stdout=central_log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = central.wait(90 + n * slow)
        except subprocess.TimeoutExpired:
            status = "timeout"
        finally:
            stop_process(central)
    with open(os.path.join(out, name, "central.log")) as f:
        central_text = f.read()
    if status != 0 or "DONE" not in central_text:
        fail(f"the central failed ({status}): {central_text.strip()[-300:]}")
    # Identical shutdown in both runs: our peripheral saw the disconnection (advertising resumed when
    # the central connected: a debug line).
    if kind == "ours" and not args.peripheral_flags and not wait_for("peripheral.log", "info: disconnected:", 1, 10 * slow):
        fail("the peripheral did not see the disconnection")
    time.sleep(0.5)
    # SIGTERM to the measured process (valgrind runs it in its own process).
    guest.check(f"kill -TERM $(cat {d}/pid)")
    deadline = time.time() + 30 * slow
    while not text("rc").strip() and time.time() < deadline:
        time.sleep(0.2)
    rc = text("rc").strip()
    if not rc:
        guest.run(f"kill -KILL $(cat {d}/pid)")
        fail("the peripheral did not exit after SIGTERM")
    if kind == "ours" and rc != "0":
        fail(f"the peripheral exited {rc} on SIGTERM, not 0")
    if tool == "strace":
        # strace writes its summary when the last traced thread is gone.
        code, output = guest.run(f"s=$(cat {d}/strace.pid); for i in $(seq 300); do kill -0 $s 2>/dev/null || break;"
                                 f" sleep 0.1; done; kill -0 $s 2>/dev/null && exit 1; cp /tmp/{name}.strace {d}/strace.txt"
                                 f" && rm /tmp/{name}.strace && a=/tmp/{name}.allocs.$(cat {d}/pid) && if [ -e $a ]; then"
                                 f" cp $a {d}/allocs.bin; fi; rm -f /tmp/{name}.allocs.*", timeout=60)
        if code != 0:
            fail(f"strace did not finish: {output.strip()} {text('strace.log').strip()}")
    for entry in os.listdir(host_dir):
        shutil.copy(os.path.join(host_dir, entry), os.path.join(out, name, entry))
    shutil.rmtree(host_dir, ignore_errors=True)
    log(f"{time.time() - t0:.0f} s")


def callgrind_figures(out, kind, n):
    path = os.path.join(out, f"{kind}-callgrind-{n}", "callgrind.out")
    result = subprocess.run([sys.executable, os.path.join(REPO, "Tests", "PythonSupport", "callgrind_profile.py"), path,
                             "libusb_submit_transfer", "poll"], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def strace_figures(out, kind, n):
    """-> ({syscall: calls}, {syscall: errors}, USBDEVFS_SUBMITURB ioctls) from strace -f -C output."""
    with open(os.path.join(out, f"{kind}-strace-{n}", "strace.txt"), errors="replace") as f:
        text = f.read()
    try:
        calls, errors = strace_table(text)
    except ValueError:
        raise RunFailed(f"no strace summary in {kind}-strace-{n}/strace.txt")
    submits = sum(1 for line in text.splitlines() if "USBDEVFS_SUBMITURB" in line)
    return calls, errors, submits


def strace_per_question(out, kind, n1, n2):
    """-> (syscalls by name, errors by name, submitted transfers), per question."""
    (a, ae, sub1), (b, be, sub2) = strace_figures(out, kind, n1), strace_figures(out, kind, n2)
    return per_question(a, b, n1, n2), per_question(ae, be, n1, n2), per_question(sub1, sub2, n1, n2)


def usb_syscalls(by_name, errors):
    """Along the loop's structure: per wake-up a poll and the reap loop's final EAGAIN (the ioctls that failed)."""
    return syscall_structure(by_name, errors.get("ioctl", 0.0), leave_out=("clock_gettime",))


def counter_figures(out, kind, n):
    """-> {"total", "libusb", "libraries", "program"}: alloc_count.c's counts from the moment strace attached
    (the peripheral ready) to its end, or None without them."""
    import struct

    def read(file):
        with open(os.path.join(out, f"{kind}-strace-{n}", file), "rb") as f:
            return struct.unpack("<4Q", f.read(32))

    try:
        end, ready = read("allocs.bin"), read("allocs-ready.bin")
    except (OSError, struct.error):
        return None
    return dict(zip(("total", "libusb", "libraries", "program"), (e - r for e, r in zip(end, ready))))


def counter_per_question(out, kind, n1, n2):
    a, b = counter_figures(out, kind, n1), counter_figures(out, kind, n2)
    if a is None or b is None:
        return None
    return per_question(a, b, n1, n2)


def build_counter(out, work):
    """alloc_count.so for the guest (which runs the host's /usr, so its libc): None, or why not."""
    source = os.path.join(HERE, "alloc_count.c")
    library = os.path.join(out, "alloc_count.so")
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        return "no C compiler on the host for the LD_PRELOAD allocation counter"
    result = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", library, source],
                            capture_output=True, text=True)
    if result.returncode != 0:
        return f"the allocation counter did not build: {result.stderr.strip()[:200]}"
    shutil.copy(library, work)
    return None


def number(value):
    """36 or 52.6: integers plain, the rest with one decimal."""
    return f"{value:,.0f}" if abs(value - round(value)) < 0.05 else f"{value:,.1f}"


def measure(args, out, v1, v2, s1, s2, t1, t2, bumble_tools):
    """Boots the guest and makes every run; -> 2 when a run of ours failed, else (why Bumble is missing or None,)."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)

    link = Link(2)
    guest = None
    bumble_why = None
    try:
        t0 = time.time()
        try:
            guest = Guest(link.ports[0], boot_timeout=180, hard_timeout=7200 if "callgrind" in bumble_tools else 1800)
        except (RuntimeError, AssertionError) as error:
            log(f"bench-usb: the guest did not start: {error}")
            return 2
        log(f"bench-usb: guest up in {time.time() - t0:.0f} s ({guest.file('agent.ready').splitlines()[0]})")
        counter_why = build_counter(out, guest.work)
        if counter_why:
            log(f"bench-usb: {counter_why}: allocations from callgrind only, none for Bumble")
        try:
            for tool, (n1, n2) in (("callgrind", (v1, v2)), ("strace", (s1, s2))):
                run(guest, link, out, "ours", tool, n1, args)
                run(guest, link, out, "ours", tool, n2, args)
        except (RunFailed, AssertionError, TimeoutError, RuntimeError) as error:  # fixture.Guest raises the others
            log(f"bench-usb: {error}")
            return 2
        if bumble_tools:
            try:
                copy_site_packages(guest.work)
                for tool in bumble_tools:
                    n1, n2 = (v1, v2) if tool == "callgrind" else (t1, t2)
                    run(guest, link, out, "bumble", tool, n1, args)
                    run(guest, link, out, "bumble", tool, n2, args)
            except (RunFailed, AssertionError, TimeoutError, RuntimeError, OSError, subprocess.SubprocessError) as error:
                bumble_why = str(error).splitlines()[0].split("; peripheral log:")[0]
                log(f"bench-usb: {error}")
        else:
            bumble_why = "not asked for (BENCH_USB_BUMBLE=none)"

        shutil.copy(os.path.join(guest.work, "gadget.log"), out)
    finally:
        if guest is not None:
            guest.stop()
        link.stop()
    return (bumble_why,)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--valgrind", default="20,80", help="N1,N2 of the callgrind runs")
    parser.add_argument("--strace", default="20,80", help="N1,N2 of the strace runs")
    parser.add_argument("--bumble-strace", default="10,50", help="N1,N2 of Bumble's strace runs")
    parser.add_argument("--bumble", default="strace", help="Bumble's runs: none, strace or strace,callgrind")
    parser.add_argument("--peripheral-flags", default="")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--analyze", action="store_true", help="no runs: the figures of the runs already in --out")
    parser.add_argument("--max-instructions-per-wakeup", type=int, default=1500,
                        help="libusb's poll and the loop's pass")
    parser.add_argument("--max-instructions-besides", type=int, default=32000,
                        help="per question besides the wake-ups': the work done for its packets")
    parser.add_argument("--max-allocations-ours", type=float, default=0)
    parser.add_argument("--max-syscalls-per-wakeup", type=float, default=2)
    parser.add_argument("--max-syscalls-per-transfer", type=float, default=2,
                        help="besides the wake-ups' own, plus one per question (the log line)")
    parser.add_argument("--slack", type=float, default=0.05,
                        help="allocations per question tolerated above a budget (stray start-up differences)")
    args = parser.parse_args()
    # SIGTERM (scripts/bench-usb.sh interrupted) unwinds: the guest and the Bumble link are stopped in `finally`.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    v1, v2 = (int(x) for x in args.valgrind.split(","))
    s1, s2 = (int(x) for x in args.strace.split(","))
    t1, t2 = (int(x) for x in args.bumble_strace.split(","))
    bumble_tools = [t for t in args.bumble.split(",") if t in ("strace", "callgrind")]
    out = args.out
    if args.analyze:
        # The figures of the runs already in OUT (e.g. with other budgets), nothing measured.
        bumble_why = None if os.path.isdir(os.path.join(out, f"bumble-strace-{t2}")) else f"no Bumble runs in {out}"
    else:
        status = measure(args, out, v1, v2, s1, s2, t1, t2, bumble_tools)
        if isinstance(status, int):
            return status
        bumble_why = status[0]

    # Figures per question: (run N2 - run N1) / (N2 - N1).
    c1, c2 = callgrind_figures(out, "ours", v1), callgrind_figures(out, "ours", v2)
    cg = per_question(c1, c2, v1, v2)
    allocs, ours, libusb = cg["total"], cg["ours"], cg["libusb"]
    loop = instruction_structure(c1, c2, v1, v2)
    instr = loop["total"]
    transfers_cg, polls_cg = cg["calls"]["libusb_submit_transfer"], cg["calls"]["poll"]
    by_name, errors, submits = strace_per_question(out, "ours", s1, s2)
    clock = by_name.get("clock_gettime", 0.0)
    structure = usb_syscalls(by_name, errors)
    syscalls = structure["total"]
    skip = ("clock_gettime",)

    results = {"valgrind": [v1, v2], "strace": [s1, s2], "instructions": instr,
               "instructions_per_wakeup": loop["per_wakeup"],
               "instructions_besides_wakeups": loop["besides_wakeups"],
               "wakeups_callgrind": loop["wakeups"], "allocations": allocs,
               "allocations_ours": ours, "allocations_libusb": libusb, "submitted_transfers": submits,
               "libusb_submit_transfer_calls": transfers_cg, "syscalls": syscalls, "clock_gettime": clock,
               "wakeups": structure["wakeups"], "syscalls_per_wakeup": structure["per_wakeup"],
               "syscalls_besides_wakeups": structure["besides_wakeups"],
               "syscalls_by_name": {k: v for k, v in by_name.items() if abs(v) >= 0.05}}
    log("")
    log(f"itcb-dongle --role peripheral --transport usb in the guest, per question (run of N2 minus run of N1"
        f" questions, one connection; callgrind {v1}/{v2}, strace {s1}/{s2}):")
    log(f"  instructions (callgrind)      {instr:>10,.0f}   ({c1['instructions']:,} and {c2['instructions']:,} in all),"
        f" {loop['wakeups']:.1f} wake-ups a question under callgrind")
    for line in instruction_lines(loop, "libusb's poll and the loop's pass",
                                  "on USB every transfer is its own wake-up and none can be cut"):
        log(line)
    log(f"  heap allocations (callgrind)  {allocs:>10.2f}   ours {ours:.2f}, libusb {libusb:.2f}"
        f" (by caller: calls of malloc/calloc/realloc/posix_memalign/aligned_alloc)")
    counted = counter_per_question(out, "ours", s1, s2)
    if counted is not None:
        results["allocations_counter"] = counted
        log(f"  allocations (LD_PRELOAD)      {counted['total']:>10.2f}   at full speed (the strace runs, counter"
            f" alloc_count.c): libusb {counted['libusb']:.2f}, libc/libstdc++ for their callers"
            f" {counted['libraries']:.2f}, the program {counted['program']:.2f}")
    log(f"  submitted USB transfers       {submits:>10.2f}   USBDEVFS_SUBMITURB ioctls (strace);"
        f" libusb_submit_transfer calls under callgrind {transfers_cg:.2f}")
    log(f"  syscalls (strace -f -c)       {syscalls:>10.1f}   {listing(by_name, skip)}")
    log(f"    per wake-up                 {structure['per_wakeup']:>10.2f}   poll and the reap loop's final EAGAIN,"
        f" {structure['wakeups']:.1f} wake-ups a question (they move with the load: packets that arrive together"
        f" are reaped in one)")
    log(f"    besides the wake-ups        {structure['besides_wakeups']:>10.2f}   a submit and a reap per transfer"
        f" ({submits:.2f}), the log line")
    log(f"  clock_gettime (apart)         {clock:>10.1f}   (the guest's hpet clocksource: each one is a real syscall)")
    log(f"  poll calls under callgrind    {polls_cg:>10.1f}   (wake-ups of the slowed-down process)")

    bumble_line = None
    if bumble_why is None:
        try:
            bby, _, bsubmits = strace_per_question(out, "bumble", t1, t2)
            bclock = bby.get("clock_gettime", 0.0)
            bsys = sum(bby.values()) - bclock
            results["bumble"] = {"syscalls": bsys, "clock_gettime": bclock, "submitted_transfers": bsubmits,
                                 "syscalls_by_name": {k: v for k, v in bby.items() if abs(v) >= 0.05}}
            binstr = ballocs = None
            bcounted = counter_per_question(out, "bumble", t1, t2)
            if bcounted is not None:
                ballocs = (bcounted["total"], bcounted["total"] - bcounted["libusb"])
                results["bumble"].update(allocations=ballocs[0], allocations_bumble=ballocs[1],
                                         allocations_counter=bcounted)
            if "callgrind" in bumble_tools:
                bcg = per_question(callgrind_figures(out, "bumble", v1), callgrind_figures(out, "bumble", v2), v1, v2)
                binstr = bcg["instructions"]
                ballocs = (bcg["total"], bcg["ours"])
                results["bumble"].update(instructions=binstr, allocations=ballocs[0], allocations_bumble=ballocs[1])
            log("")
            log(f"Bumble 8-Ball (Tests/PythonSupport/bumble_8ball.py, Bumble's usb transport, the system libusb) on the same"
                f" dongle, per question (strace {t1}/{t2}" + (f", callgrind {v1}/{v2}):" if binstr is not None else "):"))
            if binstr is not None:
                log(f"  instructions (callgrind)      {binstr:>10,.0f}")
            if ballocs is not None:
                how = "callgrind" if binstr is not None else "LD_PRELOAD"
                log(f"  heap allocations ({how + ')':<12}{ballocs[0]:>10.1f}   Python and Bumble {ballocs[1]:.1f},"
                    f" libusb {ballocs[0] - ballocs[1]:.1f} (malloc calls: pymalloc serves small objects itself)")
            log(f"  submitted USB transfers       {bsubmits:>10.2f}")
            log(f"  syscalls (strace -f -c)       {bsys:>10.1f}   {listing(bby, skip)}")
            log(f"  clock_gettime (apart)         {bclock:>10.1f}")
            instructions = (f"{binstr:,.0f} instructions" if binstr is not None else
                            "- instructions (Python under callgrind under TCG: over 8 minutes to start;"
                            " BENCH_USB_BUMBLE=strace,callgrind)")
            allocations = (f"{number(ballocs[0])} allocations ({number(ballocs[1])} Python/Bumble)" if ballocs
                           else "- allocations (no counter)")
            bumble_line = f"bumble usb per question: {instructions}, {allocations}, {number(bsys)} syscalls"
        except (RunFailed, OSError, KeyError, ValueError) as error:
            bumble_why = f"its figures could not be read: {error}"
    if bumble_why is not None:
        bumble_line = f"bumble usb per question: not measured: {bumble_why}"
    results["bumble_line"] = bumble_line
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)

    failures = []
    # Instructions along the loop's structure too: a wake-up's and the packets' (the total is not gated).
    failures += instruction_failures(loop, args.max_instructions_per_wakeup, args.max_instructions_besides,
                                     "libusb's poll and the loop's pass")
    if ours > args.max_allocations_ours + args.slack:
        failures.append(f"{ours:.2f} heap allocations of ours per question exceed the budget of"
                        f" {number(args.max_allocations_ours)}")
    if allocs > submits + args.slack:
        failures.append(f"{allocs:.2f} heap allocations per question exceed one per submitted USB transfer"
                        f" ({submits:.2f} per question)")
    # Syscalls along the loop's structure (docs/PERFORMANCE.md), each part a count that repeats whatever the load;
    # SYSCALL_SLACK: one stray call in one of the two runs is 1/60 a question.
    if structure["per_wakeup"] > args.max_syscalls_per_wakeup + SYSCALL_SLACK:
        failures.append(f"{structure['per_wakeup']:.2f} syscalls per wake-up exceed the budget of"
                        f" {number(args.max_syscalls_per_wakeup)} (poll and the reap loop's final EAGAIN)")
    allowed = args.max_syscalls_per_transfer * submits + 1
    if structure["besides_wakeups"] > allowed + SYSCALL_SLACK:
        failures.append(f"{structure['besides_wakeups']:.2f} syscalls per question besides the wake-ups' exceed the"
                        f" budget of {number(allowed)} ({number(args.max_syscalls_per_transfer)} per submitted transfer"
                        f" and the log line)")
    log("")
    log(f"details: {out}/KIND-TOOL-N/ (each run's logs, callgrind.out, strace.txt), results.json")
    log(bumble_line)
    for failure in failures:
        log(f"bench-usb: FAIL: {failure}")
    if failures and args.report_only:
        log("bench-usb: report only (BENCH_REPORT_ONLY=1 / --report-only): not failing")
    elif not failures:
        log("bench-usb: within budget (instructions, allocations per question; syscalls per wake-up and per transfer)")
    log(f"usb per question: {instr:,.0f} instructions, {number(allocs)} allocations ({number(ours)} ours),"
        f" {number(syscalls)} syscalls")
    return 1 if failures and not args.report_only else 0


if __name__ == "__main__":
    sys.exit(main())
