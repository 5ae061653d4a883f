"""Processes and peers for the lifecycle tests: Bumble virtual controllers on
free loopback ports, a controllable H4 proxy, our binary, a Bumble GATT client
that asks the 8-Ball, a sd_notify listener and a BTSnoop reader. Everything has
timeouts and is stopped at teardown."""
import asyncio
import collections
import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # Tests/PythonSupport/..
BINARY = os.environ.get("ITCB_DONGLE_BIN", os.path.join(REPO, ".build", "debug", "itcb-dongle"))
SERVICE = "8E38140A-27BE-4090-8955-4FC4B5698D1E"
QUESTION = "BDD37D7A-F66A-47B9-A49C-FE29FD235A77"
ANSWER = "349A0D7B-6215-4E2C-A095-AF078D737445"
SLUGS = {f"SLUG-ANSWER-{i:02d}" for i in range(20)}

def unit_command(role, **variables):
    """The systemd unit's ExecStart as systemd runs it (udev/itcb-dongle@.service,
    instance 1-1): ${VAR} is one argument, $VAR is split on whitespace; returns
    the words and the environment (Environment=, then the defaults file, then
    ITCB_ROLE=role and `variables`)."""
    import re
    unit = open(os.path.join(REPO, "udev", "itcb-dongle@.service"), encoding="utf-8").read()
    env = {}
    for line in re.findall(r"^Environment=(.*)$", unit, re.M):
        env.update(item.replace("%i", "1-1").split("=", 1) for item in line.split())
    for line in open(os.path.join(REPO, "udev", "itcb-dongle.default"), encoding="utf-8"):
        if re.match(r"^ITCB_\w+=", line):
            key, value = line.strip().split("=", 1)
            env[key] = value.strip('"')
    env.update(ITCB_ROLE=role, **variables)
    words = []
    for word in re.search(r"^ExecStart=(.*)$", unit, re.M).group(1).split():
        if re.fullmatch(r"\$\{\w+\}", word):
            words.append(env[word[2:-1]])
        elif re.fullmatch(r"\$\w+", word):
            words += env[word[1:]].split()
        else:
            words.append(word.replace("%i", "1-1"))
    return words, env


CONTROLLERS_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "controllers.py")


def start_link(script, *arguments):
    """Starts a script that serves Bumble controllers and prints "PORTS p1 p2 …" once they listen
    (controllers.py, the USB fixture's bumble_link.py) -> (its process, the ports)."""
    process = subprocess.Popen([sys.executable, script, *arguments], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
    deadline = time.time() + 60
    line = ""
    while time.time() < deadline:
        line = process.stdout.readline()
        if line.startswith("PORTS") or not line:
            break
    if not line.startswith("PORTS"):
        stop_process(process)
        raise RuntimeError(f"Bumble controllers did not start: {line!r}")
    # What the controllers print from now on (Bumble warns on every command it does
    # not support) is read as it comes and dropped: a pipe nobody reads fills at
    # 64 KB, and the controllers would stop in their next write.
    threading.Thread(target=collections.deque, args=(process.stdout, 0), daemon=True).start()
    return process, [int(p) for p in line.split()[1:]]


class Controllers:
    """N Bumble controllers on one LocalLink, each an H4 tcp-server on a free port."""

    def __init__(self, count=2, extra=()):
        self.process, self.ports = start_link(CONTROLLERS_SCRIPT, str(count), *extra)

    def stop(self):
        stop_process(self.process)


def stop_process(process, grace=3.0):
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


class Proxy:
    """An H4 byte proxy between our host and a controller port that can go
    silent (drop everything both ways) or inject packets toward the host."""

    def __init__(self, target_port):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.target_port = target_port
        self.silent = threading.Event()
        self.host = None
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        try:
            host, _ = self.listener.accept()
        except OSError:
            return
        controller = socket.create_connection(("127.0.0.1", self.target_port))
        for s in (host, controller):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.host, self.controller = host, controller
        threading.Thread(target=self._pump, args=(host, controller), daemon=True).start()
        threading.Thread(target=self._pump, args=(controller, host), daemon=True).start()

    def _pump(self, source, sink):
        while not self.closed:
            try:
                data = source.recv(4096)
            except OSError:
                return
            if not data:
                return
            self.passing(source, data)
            if not self.silent.is_set():
                try:
                    sink.sendall(data)
                except OSError:
                    return

    def passing(self, source, data):
        """Sees the bytes `source` sent (a subclass's hook)."""

    def inject_to_host(self, packet: bytes):
        self.host.sendall(packet)

    def close(self):
        self.closed = True
        for s in (self.listener, getattr(self, "host", None), getattr(self, "controller", None)):
            try:
                s and s.close()
            except OSError:
                pass


class Logged:
    """A child process in its own session whose output (stdout and stderr) is
    collected line by line with timestamps; stopped with stop_process."""

    def __init__(self, command, env=None, **popen):
        self.lines = []
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        errors="replace", env={**os.environ, **(env or {})}, start_new_session=True,
                                        **popen)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append((time.time(), line.rstrip("\r\n")))

    def wait_exit(self, timeout):
        """The exit code, once every line the process wrote has been read."""
        code = self.process.wait(timeout)
        self.reader.join(5)
        return code

    def wait_for(self, text, timeout=20.0, after=0.0, count=1):
        """The time of the `count`-th line with `text` (at or after `after`); fails with the log when none comes."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            stamps = [stamp for stamp, line in list(self.lines) if text in line and stamp >= after]
            if len(stamps) >= count:
                return stamps[count - 1]
            if self.process.poll() is not None:
                self.reader.join(5)
                if sum(1 for stamp, line in self.lines if text in line and stamp >= after) < count:
                    break
                continue
            time.sleep(0.05)
        raise AssertionError(f"no {count} log line(s) with {text!r} within {timeout} s; log:\n{self.log}")

    def wait_count(self, text, n, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline and self.count(text) < n:
            time.sleep(0.05)
        return self.count(text)

    def count(self, text):
        return sum(1 for _, line in self.lines if text in line)

    @property
    def log(self):
        return "\n".join(line for _, line in self.lines)

    def stop(self):
        stop_process(self.process)


class Dongle(Logged):
    """Our binary as a child process; its output is collected with timestamps."""

    def __init__(self, *args, env=None, binary=True):
        """binary=False: `args` is the whole command (a wrapper that execs BINARY)."""
        if not os.access(BINARY, os.X_OK):
            raise AssertionError(f"itcb-dongle binary missing at {BINARY}: run swift build first")
        super().__init__([BINARY, *args] if binary else list(args), env=env)


async def ask(port, name, questions, disconnect=True):
    """A Bumble central on controller `port`: finds `name`, subscribes to Answer,
    asks each question; returns the answers (bytes) and the connection."""
    from bumble_client import EightBall, central

    async with central(port) as device:
        ball = await EightBall.connect(device, name)
        answers = [await ball.ask(q) for q in questions]
        if disconnect:
            await ball.disconnect()
        return answers, ball.connection


def twenty_answers(port, name, prefix):
    """Twenty questions from a Bumble central on controller `port`; each answer must be a slug."""
    questions = [f"{prefix} {i}?" for i in range(20)]
    answers, _ = asyncio.run(asyncio.wait_for(ask(port, name, questions), 120))
    assert len(answers) == 20 and all(a.decode() in SLUGS for a in answers), answers
    return answers


def run_peripheral_once(port, firmware_dir, timeout=60):
    """Our peripheral on tcp:127.0.0.1:PORT with --firmware-dir, to its exit (a setup that fails)."""
    return subprocess.run([BINARY, "--role", "peripheral", "--transport", f"tcp:127.0.0.1:{port}",
                           "--firmware-dir", firmware_dir], capture_output=True, text=True, timeout=timeout)


def failed_set_up(emulation, firmware_dir):
    """Our peripheral against an emulated chip whose set-up must fail: exit 4 and
    its one error line (the emulation is stopped either way)."""
    try:
        out = run_peripheral_once(emulation.ports[0], firmware_dir)
    finally:
        emulation.stop()
    assert out.returncode == 4, out.stderr
    errors = [line for line in out.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, out.stderr
    return errors[0]


def framing_losses(metrics_file):
    """The framing_loss recoveries a --metrics-file counts."""
    import re
    return int(re.search(r'^itcb_dongle_controller_recoveries_total\{[^}]*kind="framing_loss"\} (\d+)$',
                         open(metrics_file).read(), re.M).group(1))


def realtek_rom_version(path):
    """A ROM version the Realtek v1 patch file has a patch for (patch chip id = ROM version + 1): the first."""
    with open(path, "rb") as f:
        data = f.read(16)
    return struct.unpack_from("<H", data, 14)[0] - 1


def realtek_download_phase(commands):
    """Realtek: the commands (no H4 byte) up to the Reset that follows the download (the loader's part)."""
    for i, command in enumerate(commands):
        if command[:2] == b"\x03\x0c" and any(c[:2] == b"\x20\xfc" for c in commands[:i]):
            return commands[:i + 1]
    raise AssertionError(f"no download then Reset among {len(commands)} commands")


class VendorEmulation:
    """Tests/PythonSupport/vendor_controller.py: a vendor personality (Realtek ROM, Intel
    boot loader) in front of a Bumble controller, plus plain controllers on the
    same link. Records every command to `record`; the personality's protocol
    errors and its log go next to it (.errors, .log)."""

    def __init__(self, chip, record, *options):
        self.record = record
        stem = record[:-len(".hex")] if record.endswith(".hex") else record
        self.errors_path, self.log_path = stem + ".errors", stem + ".log"
        args = [sys.executable, os.path.join(REPO, "Tests", "PythonSupport", "vendor_controller.py"), "--chip", chip,
                "--record", record, "--errors", self.errors_path, *options]
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
        line = self.process.stdout.readline()
        if not line.startswith("PORTS"):
            stop_process(self.process)
            raise RuntimeError(f"{chip} emulation did not start: {line!r}\n{self.log()}")
        self.ports = [int(p) for p in line.split()[1:]]

    def commands(self):
        if not os.path.exists(self.record):
            return []
        with open(self.record) as f:
            return [bytes.fromhex(line.split()[0]) for line in f if line.strip()]

    def rates(self):
        """Over a pseudo-terminal (--pty): (command, the port's baud rate when it came)."""
        with open(self.record) as f:
            return [(bytes.fromhex(parts[0]), int(parts[1][1:])) for parts in (line.split() for line in f) if parts]

    def errors(self):
        if not os.path.exists(self.errors_path):
            return []
        with open(self.errors_path) as f:
            return [line.rstrip("\n") for line in f if line.strip()]

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-4000:]

    def stop(self):
        stop_process(self.process)


class NotifyListener:
    """A NOTIFY_SOCKET (unix datagram) that records sd_notify messages with timestamps."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify.sock")
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(self.path)
        self.socket.settimeout(0.2)
        self.messages = []
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while not self.closed:
            try:
                data = self.socket.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            for line in data.decode().split("\n"):
                self.messages.append((time.time(), line))

    def first(self, text):
        return next((stamp for stamp, line in self.messages if line == text or line.startswith(text)), None)

    def wait_first(self, text, timeout=10):
        """`first`, once the reader thread has caught up: a message sent just before the
        process exited may still wait in the socket when the process is gone."""
        deadline = time.time() + timeout
        while self.first(text) is None and time.time() < deadline:
            time.sleep(0.05)
        return self.first(text)

    def close(self):
        self.closed = True
        self.socket.close()


def btsnoop_records(path):
    """(flags, packet) of every record of a BTSnoop file (datalink 1002, H4)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"btsnoop\0", "not a btsnoop file"
    version, datalink = struct.unpack(">II", data[8:16])
    assert (version, datalink) == (1, 1002)
    offset = 16
    records = []
    while offset + 24 <= len(data):
        original, included, flags, _drops, _ts = struct.unpack(">IIIIQ", data[offset:offset + 24])
        offset += 24
        records.append((flags, data[offset:offset + included]))
        offset += included
    return records


def sent_commands(path):
    """Opcodes (with first parameter byte) of the HCI commands the host sent."""
    out = []
    for flags, packet in btsnoop_records(path):
        if flags & 1 == 0 and packet[:1] == b"\x01":
            opcode = packet[1] | packet[2] << 8
            out.append((opcode, packet[4] if len(packet) > 4 else None))
    return out


def per_test_limit(variable, default):
    """A suite's pytest_runtest_call hook (assign it in its conftest): every test under
    time_limit, `variable` seconds from the environment, else `default`."""
    import pytest

    seconds = int(os.environ.get(variable, str(default)))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(item):
        with time_limit(item.name, seconds):
            return (yield)

    return pytest_runtest_call


@contextlib.contextmanager
def time_limit(name, seconds):
    """An overall limit for one test (SIGALRM), on top of the per-step asyncio
    timeouts: a test that hangs fails with a TimeoutError naming it."""

    def expired(signum, frame):
        raise TimeoutError(f"{name} exceeded the per-test limit of {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
