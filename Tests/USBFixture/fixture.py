"""Boots the QEMU guest of the USB fixture and runs shell commands in it.

Tests/USBFixture/run-guest.sh boots the guest (Debian 12's 6.1 kernel or 13's 6.12, TCG): the
host's /usr read-only and a fresh work folder read-write over 9p, and a virtio
serial port named "hci" that is QEMU's TCP connection to a Bumble virtual
controller on the host's loopback (no guest networking). In the guest,
guest.sh plugs in the emulated dongle (gadget_dongle.py), waits until btusb has
bound it (hci0), then runs the host's commands: cmd/N.sh → cmd/N.out, cmd/N.rc.

Commands run as root in /mnt/work with these shell helpers defined:
  unplug / plug      pull the dongle out / plug it in, and wait until done
  wait_dongle        wait until the dongle is enumerated (1-1)
  wait_btusb         wait until btusb is bound and hci0 exists
  wait_hci_idle      wait until the kernel is done with hci0 (powered down after its set-up)
  dongle_node        /dev/bus/usb/BBB/DDD of the dongle
  mark LABEL         write LABEL into the kernel log (dmesg since a mark:
  dmesg_since LABEL  ... prints the kernel log after it)
  switch_dongle ARGS replace the dongle: gadget_dongle.py restarted with ARGS
                     (e.g. --personality ax210 --firmware-dir /mnt/work/fw)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tests", "PythonSupport"))  # also when run as a script (bench_usb.py, soak_usb.py)
from harness import start_link, stop_process  # noqa: E402
CACHE = os.path.join(REPO, ".cache", "usb-fixture")
BINARY = os.environ.get("ITCB_DONGLE_RELEASE_BIN", os.path.join(REPO, ".build-embedded", "itcb-dongle"))
VID_PID = "0a12:0001"

HELPERS = r"""
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
cd /mnt/work
wait_dongle() { for i in $(seq 100); do [ -e /sys/bus/usb/devices/1-1/idVendor ] && return 0; sleep 0.1; done; echo "dongle not enumerated"; return 1; }
wait_gone() { for i in $(seq 100); do [ -e /sys/bus/usb/devices/1-1 ] || return 0; sleep 0.1; done; echo "dongle still there"; return 1; }
wait_btusb() { for i in $(seq 150); do [ -e /sys/class/bluetooth/hci0 ] && [ "$(basename "$(readlink /sys/bus/usb/devices/1-1:1.0/driver)")" = btusb ] && return 0; sleep 0.1; done; echo "btusb/hci0 missing"; return 1; }
# The kernel's Bluetooth core powers hci0 on when btusb binds (its set-up), then off
# 2 s later with an HCI Reset: wait until it is done (hci0 down, or gone) so that a
# test's fault file or our binary's detach does not land in the middle of it.
wait_hci_idle() { for i in $(seq 80); do hciconfig hci0 2>/dev/null | grep -qE "\bUP\b|INIT" || return 0; sleep 0.1; done; echo "hci0 still up"; return 1; }
unplug() { kill -USR1 "$(cat /run/gadget.pid)" && wait_gone; }
plug() { kill -USR2 "$(cat /run/gadget.pid)" && wait_dongle; }
dongle_node() { printf /dev/bus/usb/%03d/%03d "$(cat /sys/bus/usb/devices/1-1/busnum)" "$(cat /sys/bus/usb/devices/1-1/devnum)"; }
mark() { echo "usb-fixture: $1" > /dev/kmsg; }
dmesg_since() { dmesg | sed -n "/usb-fixture: $1\$/,\$p" | sed 1d; }
# The four-dongle guest (fleet=True): dongle N (1-4) is bus N, path N-1.
unplug_n() { kill -USR1 "$(cat /run/gadget$1.pid)"; for i in $(seq 100); do [ -e /sys/bus/usb/devices/$1-1 ] || return 0; sleep 0.1; done; echo "dongle $1 still there"; return 1; }
plug_n() { kill -USR2 "$(cat /run/gadget$1.pid)"; for i in $(seq 100); do [ -e /sys/bus/usb/devices/$1-1/idVendor ] && return 0; sleep 0.1; done; echo "dongle $1 not enumerated"; return 1; }
switch_dongle() {
    kill -TERM "$(cat /run/gadget.pid)"; wait_gone || return 1
    /usr/bin/python3 -u gadget_dongle.py $(cat gadget.options) "$@" /dev/gadget "$(cat /run/gadget.port)" >> gadget.log 2>&1 &
    echo $! > /run/gadget.pid
    for i in $(seq 300); do [ -e /sys/bus/usb/devices/1-1/idVendor ] && return 0; sleep 0.1; done
    echo "dongle not enumerated within 30 s of the switch"; return 1
}
"""


class Link:
    """Bumble virtual controllers on one link (bumble_link.py) on free loopback
    ports: [0] behind the guest's dongle, the others for Bumble peers."""

    def __init__(self, count=3, ports=None, options=()):

        self.options = tuple(options)  # e.g. --connection-address (bumble_link.py)
        arguments = [*self.options, *(["--ports", ",".join(map(str, ports))] if ports else [str(count)])]
        self.process, self.ports = start_link(os.path.join(HERE, "bumble_link.py"), *arguments)

    def restart(self):
        """A new link on the same ports (QEMU reconnects to port 0 by itself)."""
        self.stop()
        self.__init__(ports=self.ports, options=self.options)

    def stop(self):
        stop_process(self.process)


class Guest:
    """One booted guest serving many commands. `hard_timeout` bounds its whole
    life (run-guest.sh kills QEMU then, and as soon as this process is gone).
    It is only a backstop (every command has its own timeout, and QEMU dies
    with this process): a run longer than it loses its dongle in the middle,
    which looks like a dongle that stopped answering. That is how the first
    1000-cycle soak "stalled" after 15 minutes (900 s, the old default) on a
    loaded host; `died()` says so."""

    def __init__(self, controller_port, boot_timeout=120, systemd=False, hard_timeout=3600, gadget_options="",
                 fleet=False, kernel="6.1"):
        """controller_port: one port, or with fleet=True four (one controller per
        dongle: four FunctionFS dongles on four dummy_hcd buses, ffs_dongle.py).
        kernel: Debian 12's "6.1" or Debian 13's "6.12" (setup.sh prepares both)."""
        if not os.access(BINARY, os.X_OK):
            raise AssertionError(f"shipped binary missing at {BINARY}: scripts/build-embedded.sh"
                                 " (or set ITCB_DONGLE_RELEASE_BIN)")
        self.kernel = kernel
        self.work = tempfile.mkdtemp(prefix="usb-fixture-")
        os.chmod(self.work, 0o755)  # the guest's unprivileged users run the binary from here
        os.makedirs(os.path.join(self.work, "cmd"))
        shutil.copy(BINARY, os.path.join(self.work, "itcb-dongle"))
        with open(os.path.join(self.work, "gadget.options"), "w") as f:
            # e.g. --trace (environment), --personality CHIP (the caller)
            f.write(" ".join(filter(None, (os.environ.get("USB_FIXTURE_GADGET_OPTIONS", ""), gadget_options))) + "\n")
        if systemd:
            # systemd as PID 1 with the project's rule, unit and options installed.
            shutil.copy(os.path.join(HERE, "systemd-root.sh"), self.work)
            for name in ("70-itcb-dongle.rules", "itcb-dongle@.service", "itcb-dongle.default"):
                shutil.copy(os.path.join(REPO, "udev", name), self.work)
        if fleet:
            open(os.path.join(self.work, "fleet"), "w").close()
        ports = ",".join(map(str, controller_port)) if isinstance(controller_port, (list, tuple)) else str(controller_port)
        self.counter = 0
        self.started = time.time()
        # A guest kernel that panics before the agent is up (seen once in CI: Debian 13's
        # 6.12 under QEMU 7.2's TCG, in an initcall, before any of our code ran) boots again,
        # once; a second panic fails. The first console is kept as console-panic.log.
        for attempt in (1, 2):
            self.runner = subprocess.Popen(
                [os.path.join(HERE, "run-guest.sh"), "--work", self.work, "--hci-port", ports,
                 "--timeout", str(hard_timeout), "--parent", str(os.getpid()), "--kernel", kernel],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=open(os.path.join(self.work, "run-guest.log"), "w"), start_new_session=True)
            deadline = time.time() + boot_timeout
            while not os.path.exists(os.path.join(self.work, "agent.ready")):
                if self.runner.poll() is not None or time.time() > deadline:
                    break
                time.sleep(0.2)
            else:
                break
            if attempt == 1 and self.runner.poll() is not None and "Kernel panic" in self.file("console.log"):
                os.replace(os.path.join(self.work, "console.log"), os.path.join(self.work, "console-panic.log"))
                print(f"\nusb-fixture: the {kernel} guest kernel panicked while booting; booting it again",
                      file=sys.stderr)
                continue
            details = self.diagnostics()
            self.stop()
            raise RuntimeError(f"guest did not come up within {boot_timeout} s:\n{details}")
        self.boot_seconds = time.time() - self.started

    def run(self, script, timeout=60):
        """Runs a shell script in the guest (as root, in /mnt/work, with the
        helpers above); returns (exit code, stdout+stderr)."""
        n = self.counter
        self.counter += 1
        path = os.path.join(self.work, "cmd", f"{n}.sh")
        with open(path + ".tmp", "w") as f:
            f.write(HELPERS + script + "\n")
        os.rename(path + ".tmp", path)
        rc_path = os.path.join(self.work, "cmd", f"{n}.rc")
        deadline = time.time() + timeout
        while not os.path.exists(rc_path):
            if self.runner.poll() is not None:
                raise RuntimeError(f"guest died:\n{self.diagnostics()}")
            if time.time() > deadline:
                raise TimeoutError(f"guest command {n} timed out after {timeout} s:\n{script}\n{self.diagnostics()}")
            time.sleep(0.1)
        with open(rc_path) as f:
            code = int(f.read().strip() or "255")
        with open(os.path.join(self.work, "cmd", f"{n}.out"), errors="replace") as f:
            return code, f.read()

    def check(self, script, timeout=60):
        """run() that must succeed; returns the output."""
        code, out = self.run(script, timeout)
        assert code == 0, f"guest command failed ({code}):\n{script}\n--- output\n{out}"
        return out

    def died(self):
        """None while the guest runs, else why it ended (run-guest.sh's last lines)."""
        if self.runner.poll() is None:
            return None
        why = "its hard time limit" if os.path.exists(os.path.join(self.work, ".timed-out")) else "it ended"
        return f"guest gone ({why}, run-guest.sh status {self.runner.returncode}): {self.file('run-guest.log')[-500:]}"

    def file(self, name):
        try:
            with open(os.path.join(self.work, name), errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_for_file_text(self, name, text, timeout=30, after=0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.file(name).count(text) > after:
                return
            if self.runner.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(f"{text!r} not in {name} within {timeout} s:\n{self.file(name)[-3000:]}\n"
                             f"{self.dongle_report()}")

    def dongle_report(self, gadget_chars=2000):
        """The emulated dongle's log and the kernel's last lines: what a failure needs to be read."""
        try:
            kernel = self.run("dmesg | tail -n 40", timeout=20)[1] if self.runner.poll() is None else "(guest gone)"
        except (RuntimeError, TimeoutError) as error:
            kernel = f"(no kernel log: {error})"
        return f"--- gadget.log (last lines)\n{self.file('gadget.log')[-gadget_chars:]}\n--- kernel (last lines)\n{kernel}"

    def replug_if_gone(self):
        """Puts the dongle back on the bus when a test left it off (the host gave up
        on it after a failed port reset, a test ended mid-unplug), so that one
        failure does not take every later test along. Returns None when it was
        there, else what was seen (the gadget's log and the kernel's)."""
        if self.runner.poll() is not None or self.run("[ -e /sys/bus/usb/devices/1-1/idVendor ]", timeout=20)[0] == 0:
            return None
        report = self.dongle_report()
        self.run("pkill -KILL -x itcb-dongle; unplug; plug && wait_btusb", timeout=60)
        return report

    def diagnostics(self):
        return "\n".join(f"--- {name}\n{self.file(name)[-2500:]}"
                         for name in ("run-guest.log", "console.log", "guest.log", "gadget.log", "gadget1.log",
                                      "gadget2.log", "gadget3.log", "gadget4.log") if self.file(name))

    def stop(self):
        try:
            open(os.path.join(self.work, "cmd", "stop"), "w").close()
            self.runner.wait(20)
        except (OSError, subprocess.TimeoutExpired):  # work folder gone, or the guest does not stop
            stop_process(self.runner)  # run-guest.sh kills QEMU on its way out
        if os.environ.get("USB_FIXTURE_KEEP"):
            print(f"\nusb-fixture: kept {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)
