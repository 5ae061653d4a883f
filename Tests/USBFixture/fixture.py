"""Boots the QEMU guest of the USB fixture and runs shell commands in it.

The guest (Debian 6.1 kernel, TCG) mounts the host's /usr read-only and a fresh
work folder read-write over 9p; a virtio serial port named "hci" is a TCP
connection from QEMU to a Bumble virtual controller on the host's loopback, so
no guest networking is involved. Tests/USBFixture/setup.sh prepares kernel and
initramfs."""
import os
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(REPO, ".cache", "usb-fixture")
BINARY = os.environ.get("ITCB_DONGLE_RELEASE_BIN", os.path.join(REPO, ".build-release", "release", "itcb-dongle"))


class Guest:
    def __init__(self, controller_port, boot_timeout=120, systemd=False):
        assert os.path.exists(BINARY), f"release binary missing at {BINARY} (swift build -c release --static-swift-stdlib --scratch-path .build-release)"
        self.work = tempfile.mkdtemp(prefix="usb-fixture-")
        os.chmod(self.work, 0o755)  # the guest's unprivileged users run the binary from here
        os.makedirs(os.path.join(self.work, "cmd"))
        shutil.copy(BINARY, os.path.join(self.work, "itcb-dongle"))
        for name in ("gadget_dongle.py", "guest.sh"):
            shutil.copy(os.path.join(HERE, name), self.work)
        if systemd:
            # systemd as PID 1 with the project's rule, unit and options installed.
            shutil.copy(os.path.join(HERE, "systemd-root.sh"), self.work)
            for name in ("70-itcb-dongle.rules", "itcb-dongle@.service", "itcb-dongle.default"):
                shutil.copy(os.path.join(REPO, "udev", name), self.work)
        self.counter = 0
        self.log = open(os.path.join(self.work, "console.log"), "w")
        self.qemu = subprocess.Popen([
            "qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", "1024", "-smp", "2",
            "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
            "-kernel", os.path.join(CACHE, "vmlinuz"), "-initrd", os.path.join(CACHE, "initrd.img"),
            "-append", "console=ttyS0 panic=-1 quiet",
            "-virtfs", "local,path=/usr,mount_tag=hostusr,security_model=none,readonly=on",
            "-virtfs", f"local,path={self.work},mount_tag=work,security_model=none",
            "-chardev", f"socket,id=hci,host=127.0.0.1,port={controller_port}",
            "-device", "virtio-serial-pci", "-device", "virtserialport,chardev=hci,name=hci",
        ], stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + boot_timeout
        while not os.path.exists(os.path.join(self.work, "agent.ready")):
            if self.qemu.poll() is not None or time.time() > deadline:
                details = self.diagnostics()
                self.stop()
                raise RuntimeError(f"guest did not come up:\n{details}")
            time.sleep(0.2)

    def run(self, script, timeout=60):
        """Runs a shell script in the guest; returns (exit code, output)."""
        n = self.counter
        self.counter += 1
        path = os.path.join(self.work, "cmd", f"{n}.sh")
        with open(path + ".tmp", "w") as f:
            f.write("export PATH=/bin:/sbin:/usr/bin:/usr/sbin\ncd /mnt/work\n" + script + "\n")
        os.rename(path + ".tmp", path)
        rc_path = os.path.join(self.work, "cmd", f"{n}.rc")
        deadline = time.time() + timeout
        while not os.path.exists(rc_path):
            if self.qemu.poll() is not None:
                raise RuntimeError(f"guest died:\n{self.diagnostics()}")
            if time.time() > deadline:
                raise TimeoutError(f"guest command {n} timed out:\n{script}\n{self.diagnostics()}")
            time.sleep(0.1)
        with open(rc_path) as f:
            code = int(f.read().strip() or "255")
        with open(os.path.join(self.work, "cmd", f"{n}.out"), errors="replace") as f:
            return code, f.read()

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
            time.sleep(0.2)
        raise AssertionError(f"{text!r} not in {name} within {timeout} s:\n{self.file(name)[-3000:]}")

    def diagnostics(self):
        self.log.flush()
        return "\n".join(f"--- {name}\n{self.file(name)[-2500:]}" for name in ("console.log", "guest.log", "gadget.log"))

    def stop(self):
        open(os.path.join(self.work, "cmd", "stop"), "w").close()
        try:
            self.qemu.wait(15)
        except subprocess.TimeoutExpired:
            self.qemu.kill()
            self.qemu.wait(5)
        self.log.close()
        if os.environ.get("USB_FIXTURE_KEEP"):
            print(f"usb-fixture: kept {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)
