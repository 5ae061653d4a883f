"""Every row of Debian 13's btusb.ko (kernel_btusb.py) that Linux
hands to a vendor set-up we know — BTUSB_REALTEK, _MEDIATEK, _INTEL_COMBINED,
_BCM_PATCHRAM (with its vendor+class wildcards) or _CSR — is claimed by our
table for the same chipset, or listed with the reason it is not served (the
table's source, Sources/Chipsets/NotServed.swift, which the CLI answers
from, and docs/DONGLES.md "Kernel rows not claimed"). One line per
difference, so the next kernel's new rows show up by themselves."""
import json
import re
import subprocess
from pathlib import Path

from harness import BINARY, REPO
import kernel_btusb as kb


def ask(ids):
    out = subprocess.run([BINARY, "--list-controllers", "--json", *[f"usb:{v:04x}:{p:04x}" for v, p in ids]],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    return {(int(a["vid"], 16), int(a["pid"], 16)): a for a in answers}


def documented():
    text = (Path(REPO) / "docs/DONGLES.md").read_text()
    section = text.split("## Kernel rows not claimed", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"\b([0-9a-f]{4}:[0-9a-f]{4})\b", section))


def test_every_kernel_row_of_a_known_family_is_claimed_or_listed():
    kernel = kb.rows()
    ours = [r for r in kernel if any(r[6] & bit for bit in kb.FAMILIES)]
    counts = {name: sum(1 for r in ours if r[6] & bit) for bit, name in kb.FAMILIES.items()}
    # The package's table, not an empty read: every family has rows (Debian 13: 87 Realtek, 65 MediaTek, …).
    assert all(counts[f] for f in ("realtek", "mediatek", "intel", "broadcom", "csr")), counts
    answers = ask(sorted({(r[2], r[3]) for r in ours}))
    listed = documented()
    problems = []
    for label, flags, vendor, product, device_class, interface_class, info in ours:
        bit = next(b for b in kb.FAMILIES if info & b)
        family, flag = kb.FAMILIES[bit], kb.FLAG_NAMES[bit]
        answer = answers[(vendor, product)]
        if not flags & kb.MATCH_PRODUCT:
            # A vendor catch-all: any product of the vendor, with the class the row names.
            row = f"{vendor:04x}:* {'interface' if flags & kb.MATCH_INT_CLASS else 'device'} " \
                  f"{'%02x/%02x/%02x' % (interface_class if flags & kb.MATCH_INT_CLASS else device_class)}"
            if (interface_class if flags & kb.MATCH_INT_CLASS else device_class)[0] == 0xFF:
                got = answer["by_class"]
            else:
                got = answer["chipset"] if not answer["depends_on_class"] else None
            if got != family:
                problems.append(f"{label} row {row} ({flag}): ours gives {got or 'nothing'}")
            continue
        row = f"{vendor:04x}:{product:04x}"
        # A firmware answer names a file (not just its folder) or says when it is named.
        named = answer["firmware"] and not answer["firmware"].endswith("/")
        if answer["chipset"] == family and answer["served"] and (named or family == "csr"):
            continue
        if answer["chipset"] == family and answer["reason"] and row in listed:
            continue  # listed, with the reason, in the source and in docs/DONGLES.md
        got = answer["chipset"] or "nothing"
        problems.append(f"{label} row {row} ({flag}): ours gives {got}"
                        + ("" if answer["reason"] is None else f" ({answer['reason']})")
                        + ("" if row in listed else "; not in docs/DONGLES.md 'Kernel rows not claimed'"))
    assert not problems, f"{kb.package_name()}'s btusb.ko against our table:\n" + "\n".join(problems)
