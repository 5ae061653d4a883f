"""What the vendor tests (test_vendor.py, test_mediatek.py) do in their guest: the
firmware the guest's kernel may find, the emulated chip's record of what each host
sent, plugging a personality in, the kernel log since a mark, and our program
started, waited for, asked and stopped."""
import asyncio
import os
import shutil
import time

import harness
from harness import SLUGS

GUEST_FW = "/mnt/work/fw"  # the personality's and our binary's firmware folder
QUESTIONS = 5  # through each loaded chip: it is a controller (a question takes about a second in the TCG guest)


def opcode(command):
    return command[0] | command[1] << 8


def linux_firmware(guest, firmware, names=()):
    """What the guest kernel finds (its firmware path is the work folder's linuxfw/): only `names`."""
    folder = os.path.join(guest.work, "linuxfw")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name in names:
        os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
        shutil.copy(os.path.join(firmware, name), os.path.join(folder, name))


def recorded(guest):
    """The dongle's record since the last clear: [(command, came on bulk OUT)]."""
    out = []
    for line in guest.file("vendor-commands.hex").splitlines():
        words = line.split()
        if words:
            out.append((bytes.fromhex(words[0]), words[1:] == ["bulk"]))
    return out


def settled(guest, quiet=2.0, timeout=60):
    """The record once no command has joined it for `quiet` seconds."""
    deadline, last, since = time.time() + timeout, None, time.time()
    while time.time() < deadline:
        now = recorded(guest)
        if now != last:
            last, since = now, time.time()
        elif time.time() - since >= quiet:
            return now
        time.sleep(0.3)
    raise AssertionError(f"the record still grows after {timeout} s ({len(last)} commands)")


def clear_record(guest):
    guest.check(": > vendor-commands.hex")


def plug_personality(guest, chip, label, rom_version=None, extra=""):
    """A freshly powered chip of this kind, bound by btusb (which starts its own set-up).
    The old dongle is unplugged before the record is emptied: the kernel may still be
    setting it up again after the last program's exit, and its commands would land in
    the new chip's record."""
    extra += f" --rom-version {rom_version}" if rom_version is not None else ""
    guest.check(f"unplug; : > vendor-commands.hex; rm -f vendor-errors.txt hang-until-port-reset; mark {label};"
                f" switch_dongle --personality {chip} --firmware-dir {GUEST_FW}{extra} && wait_btusb", timeout=60)


def power_cycle(guest, label):
    guest.check(f"unplug && : > vendor-commands.hex && mark {label} && plug && wait_btusb", timeout=60)


def wait_kernel(guest, label, text, timeout=120):
    """The kernel log since `label` once it holds `text` (or one of a tuple of texts)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = guest.check(f"dmesg_since {label}")
        if any(t in out for t in ((text,) if isinstance(text, str) else text)):
            return out
        time.sleep(0.5)
    raise AssertionError(f"{text!r} not in the kernel log within {timeout} s:\n{out[-4000:]}\n"
                         f"--- gadget\n{guest.file('gadget.log')[-3000:]}")


def start(guest, name, args):
    guest.check(f"rm -f {name}.rc; mark {name}; ( ./itcb-dongle {args} > {name}.log 2>&1; echo $? > {name}.rc ) &"
                " sleep 0.2")


def wait_advertising(guest, name, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if "info: advertising" in guest.file(f"{name}.log"):
            return
        if guest.file(f"{name}.rc").strip():
            break
        time.sleep(0.3)
    raise AssertionError(f"{name}: not advertising within {timeout} s (exit {guest.file(name + '.rc').strip()}):\n"
                         f"{guest.file(name + '.log')[-3000:]}\n--- gadget\n{guest.file('gadget.log')[-3000:]}")


def stop(guest, name):
    """SIGTERM; the program must exit 0. Nothing to do if it was never started or
    has exited already (the test's own assertion says what went wrong)."""
    if guest.file(f"{name}.rc").strip() or not guest.file(f"{name}.log"):
        return
    guest.run("pkill -TERM -x itcb-dongle; true")
    deadline = time.time() + 20
    while time.time() < deadline and not guest.file(f"{name}.rc").strip():
        time.sleep(0.2)
    assert guest.file(f"{name}.rc").strip() == "0", guest.file(f"{name}.log")[-3000:]


def ask(link, name, count):
    questions = [f"{name} question {i}?" for i in range(count)]
    answers, _ = asyncio.run(asyncio.wait_for(harness.ask(link.ports[1], name, questions), 180))
    assert len(answers) == count and all(a.decode() in SLUGS for a in answers), answers


# What Debian 12's Linux 6.1 btusb sends an MT7925 it takes for a plain controller (it
# has no MediaTek row for 0489:e113): Read Local Features at once, which a cold chip
# refuses (the MediaTek tests run on 6.12, whose btmtk knows the chip, unless
# USB_FIXTURE_MEDIATEK_KERNEL=6.1 says otherwise); see no_personality_errors.
KERNEL_PROBE_OF_A_COLD_MT7925 = "command 0x1003 before Bluetooth is on"


def no_personality_errors(guest, kernel_probe=False):
    """kernel_probe: the dongle was given back to the kernel's btusb while its chip was
    cold (our close and reopen for the port reset after the subsystem reset), so the
    kernel's own probe of an MT7925 may show; our set-up sends no such command (its
    commands are checked one by one)."""
    errors = [line for line in guest.file("vendor-errors.txt").splitlines()
              if not (kernel_probe and line == KERNEL_PROBE_OF_A_COLD_MT7925)]
    assert not errors, "the emulated chip saw protocol errors:\n" + "\n".join(errors)
