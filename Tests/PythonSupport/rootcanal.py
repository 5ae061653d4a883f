"""Google RootCanal (PyPI `rootcanal` 1.13.0) as a virtual radio for the tests.

scripts/rootcanal-setup.sh makes it runnable (a debootstrapped Debian trixie tree
in the user's cache, for its newer glibc) and prints the command; RootCanal then
listens for HCI over H4/TCP on one port, and every TCP connection to that port
is a new controller on the same virtual radio. Unlike Bumble's controller it
gives each controller a public address, reports a different RSSI on every
advertising report, and answers HCI commands as the Core Specification says.

Also here: the check that every HCI command our binary sent got status 0,
read from its btsnoop file."""
import os
import socket
import subprocess
import time

from harness import REPO, btsnoop_records, stop_process

SETUP = os.path.join(REPO, "scripts", "rootcanal-setup.sh")


def rootcanal_command():
    """The command line that starts RootCanal ($ITCB_ROOTCANAL overrides)."""
    if os.environ.get("ITCB_ROOTCANAL"):
        return os.environ["ITCB_ROOTCANAL"].split()
    result = subprocess.run([SETUP], capture_output=True, text=True, timeout=1200)
    if result.returncode != 0:
        raise RuntimeError(f"RootCanal is not available:\n{result.stderr.strip()}")
    return result.stdout.split()


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


class RootCanal:
    """One RootCanal process: `port` is its HCI port (each connection a new
    controller on one radio). `ports` repeats it so tests written for N Bumble
    controllers (link.ports[i]) run unchanged."""

    def __init__(self, command=None, count=4):
        command = command or rootcanal_command()
        for _attempt in range(3):
            test, hci, link, link_ble = free_ports(4)
            self.lines = []
            self.process = subprocess.Popen(
                [*command, f"-test_port={test}", f"-hci_port={hci}", f"-link_port={link}",
                 f"-link_ble_port={link_ble}"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
            if self._wait_ready():
                self.port = hci
                self.ports = [hci] * count
                return
            stop_process(self.process)
        raise RuntimeError("RootCanal did not start:\n" + "\n".join(self.lines[-20:]))

    def _wait_ready(self, timeout=30.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if not line:
                return False
            self.lines.append(line.rstrip("\n"))
            if "initialize: Finished" in line:
                # Keep draining its log so RootCanal never blocks on a full pipe.
                import threading
                threading.Thread(target=self._drain, daemon=True).start()
                return True
        return False

    def _drain(self):
        for line in self.process.stdout:
            if len(self.lines) < 20000:
                self.lines.append(line.rstrip("\n"))

    def stop(self):
        stop_process(self.process)


def command_results(path):
    """[(opcode, status or None)] for every HCI command in a btsnoop file, in the
    order sent; status from its Command Complete / Command Status (None: no answer)."""
    sent, answers = [], []
    for flags, packet in btsnoop_records(path):
        if flags & 1 == 0 and packet[:1] == b"\x01" and len(packet) >= 4:
            sent.append(packet[1] | packet[2] << 8)
        elif flags & 1 == 1 and packet[:1] == b"\x04" and len(packet) >= 3:
            code = packet[1]
            if code == 0x0E and len(packet) >= 7:
                answers.append((packet[4] | packet[5] << 8, packet[6]))
            elif code == 0x0F and len(packet) >= 7:
                answers.append((packet[5] | packet[6] << 8, packet[3]))
    results = []
    for opcode in sent:
        index = next((i for i, (o, _) in enumerate(answers) if o == opcode), None)
        results.append((opcode, answers.pop(index)[1] if index is not None else None))
    return results


# What Bumble's virtual controller does with the optional steps of a link's
# tuning (LinkTuning.swift): LE Set Data Length refused (Unknown HCI Command),
# LE Set PHY never answered. Suites whose binary runs on one pass this.
BUMBLE_OPTIONAL_REFUSALS = {0x2022: {0x01}, 0x2032: {None}}


def assert_every_command_succeeded(path, allow_unanswered_last=False, tolerated=None):
    """Every HCI command in the btsnoop got status 0x00; the last one (HCI Reset at
    exit) may be unanswered when `allow_unanswered_last` (the process exited);
    `tolerated` maps an opcode to the other outcomes it may have (status, None)."""
    results = command_results(path)
    assert results, f"no HCI commands in {path}"
    if allow_unanswered_last and results[-1][1] is None:
        results = results[:-1]
    tolerated = tolerated or {}
    bad = [(f"0x{o:04x}", "no answer" if s is None else f"0x{s:02x}") for o, s in results
           if s != 0 and s not in tolerated.get(o, ())]
    assert not bad, f"HCI commands without status 0 in {path}: {bad}"
    return results
