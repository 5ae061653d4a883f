#!/usr/bin/env python3
"""The firmware's size budgets (docs/FIRMWARE.md), measured on the linked ELF:

  flash        .text + .rodata + .got + .ARM.exidx + the .data image   <= --flash
  static RAM   .data + .bss (the stack excluded)                       <= --ram
  frames       every function's stack frame, from its prologue         <= --frame

Frames are read from the code actually linked (llvm-objdump of the ELF: push,
vpush, str ...[sp, #-n]!, sub sp), so they cover the Swift core, the main loop,
the board's C and the libraries, start-up included. The stack's high-water mark
at run time is the suite's part (Tests/Firmware).

usage: budget.py ELF [--map MAP] [--flash B] [--ram B] [--frame B] [--top N] [--json FILE]
Exit 1 with one line per exceeded budget."""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

SWIFT_BIN = os.path.dirname(os.path.realpath(shutil.which("swiftc") or "/opt/swift/usr/bin/swiftc"))


def tool(name):
    path = os.path.join(SWIFT_BIN, name)
    return path if os.access(path, os.X_OK) else (shutil.which(name) or name)


def sections(elf):
    """name -> (size, address, flags) from the section headers."""
    out = subprocess.run(["arm-none-eabi-readelf", "-S", "-W", elf], capture_output=True, text=True, check=True)
    result = {}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
        if m:
            result[m.group(1)] = (int(m.group(3), 16), int(m.group(2), 16), m.group(4))
    return result


def prologue_frames(elf):
    """Stack bytes each function reserves in its prologue."""
    dis = subprocess.run([tool("llvm-objdump"), "-d", "--no-show-raw-insn", elf],
                         capture_output=True, text=True, check=True).stdout
    frames = {}
    name = None
    scanned = 0
    done = True
    regs = {}
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            name, scanned, done, regs = m.group(1), 0, False, {}
            frames.setdefault(name, 0)
            continue
        if name is None or done:
            continue
        m = re.match(r"^\s*[0-9a-f]+:\s+(\S+)\s*(.*)$", line)
        if not m:
            continue
        op, args = m.group(1), m.group(2).split("@")[0].strip()
        scanned += 1
        if scanned > 24 or op.startswith(("b", "pop", "ldm", "cb")) and op not in ("bic", "bics", "bic.w"):
            done = True
            continue
        if op in ("push", "push.w", "stmdb", "stmdb.w") and ("sp!" in args or op.startswith("push")):
            frames[name] += 4 * len(re.search(r"\{([^}]*)\}", args).group(1).split(","))
        elif op == "vpush":
            regs_ = re.search(r"\{([^}]*)\}", args).group(1)
            count = 0
            for part in regs_.split(","):
                part = part.strip()
                r = re.match(r"[ds](\d+)-[ds](\d+)", part)
                count += (int(r.group(2)) - int(r.group(1)) + 1) if r else 1
            frames[name] += count * (8 if "d" in regs_ else 4)
        elif op.startswith("str") and re.search(r"\[sp, #-(\d+)\]!", args):
            frames[name] += int(re.search(r"\[sp, #-(\d+)\]!", args).group(1))
        elif op.startswith(("movw", "mov.w", "mov")) and re.match(r"(r\d+|r1[0-2]|ip), #(0x[0-9a-f]+|\d+)$", args):
            r = re.match(r"(\S+), #(\S+)", args)
            regs[r.group(1)] = int(r.group(2), 0)
        elif op.startswith("movt") and re.match(r"(\S+), #(\S+)", args):
            r = re.match(r"(\S+), #(\S+)", args)
            regs[r.group(1)] = (regs.get(r.group(1), 0) & 0xFFFF) | (int(r.group(2), 0) << 16)
        elif op.startswith("sub"):
            r = re.match(r"sp, (?:sp, )?#(0x[0-9a-f]+|\d+)$", args)
            if r:
                frames[name] += int(r.group(1), 0)
                continue
            r = re.match(r"sp, (?:sp, )?(\S+)$", args)
            if r and r.group(1) in regs:
                frames[name] += regs[r.group(1)]
    return frames


def r10_clobbers(elf):
    """Functions that write r10 without saving it and return: r10 is callee-saved
    (AAPCS) and Swift passes `self` in it, so the caller's self would be lost.
    Swift 6.3's ARM load/store optimiser produced exactly this (`ldm r10!` in
    ByteReader.has) until scripts/firmware.sh turned it off. Outlined fragments
    (part of their callers) are not functions of their own and are skipped."""
    dis = subprocess.run([tool("llvm-objdump"), "-d", "--no-show-raw-insn", elf],
                         capture_output=True, text=True, check=True).stdout
    found = []
    name, saves, writes, returns = None, False, None, False

    def close():
        if name and writes and not saves and returns and not name.startswith("OUTLINED_FUNCTION"):
            found.append((name, writes))

    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            close()
            name, saves, writes, returns = m.group(1), False, None, False
            continue
        m = re.match(r"^\s*[0-9a-f]+:\s+(\S+)\s*(.*)$", line)
        if not m or name is None:
            continue
        op, args = m.group(1), m.group(2).split("@")[0].strip()
        if op.startswith(("push", "stmdb")) and re.search(r"\br10\b|r\d+-r1[01]", args):
            saves = True
        if op.startswith(("pop", "ldm")) and "pc" in args or op == "bx" and args == "lr":
            returns = True
        if writes is None and ("r10!" in args or re.match(r"r10(,|$)", args)
                               and not op.startswith(("str", "cmp", "cmn", "tst", "teq", "push", "stm", "cb"))):
            writes = line.strip()
    close()
    return found


def demangle(names):
    try:
        out = subprocess.run([tool("swift-demangle"), "--simplified"], input="\n".join(names),
                             capture_output=True, text=True, check=True).stdout.splitlines()
        return out if len(out) == len(names) else names
    except (OSError, subprocess.CalledProcessError):
        return names


def flash_by_object(map_path):
    """Bytes each input file puts into flash (from the linker map)."""
    totals = collections.Counter()
    if not map_path or not os.path.exists(map_path):
        return totals
    text = open(map_path, errors="replace").read()
    text = text.split("Linker script and memory map", 1)[-1]
    pending = None
    for line in text.splitlines():
        m = re.match(r"^ (\.(?:text|rodata|data|got|ARM\.exidx)\S*)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.(?:text|rodata|data|got|ARM\.exidx)\S*)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+\.(?:o|a)\S*)", line)
        if m and (m.group(1) or pending):
            size = int(m.group(3), 16)
            obj = m.group(4)
            obj = re.sub(r".*/", "", obj)
            obj = re.sub(r"\(.*\)$", "", obj)  # archive members: count the archive
            totals[obj] += size
        pending = None
    return totals


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("elf")
    parser.add_argument("--map")
    parser.add_argument("--flash", type=int, default=64 * 1024)
    parser.add_argument("--ram", type=int, default=24 * 1024)
    parser.add_argument("--frame", type=int, default=2 * 1024)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--json")
    args = parser.parse_args()

    secs = sections(args.elf)

    def size(name):
        return secs.get(name, (0, 0, ""))[0]

    flash = sum(s for n, (s, a, f) in secs.items() if "A" in f and a < 0x2000_0000 and s) + size(".data")
    ram = size(".data") + size(".bss")
    stack = size(".stack")
    frames = prologue_frames(args.elf)
    top = sorted(frames.items(), key=lambda kv: -kv[1])[:args.top]
    names = demangle([n for n, _ in top])
    objects = flash_by_object(args.map)

    print(f"budget: flash {flash} B of {args.flash} B ({flash * 100 // args.flash}%)"
          f"  [.text {size('.text')}, .data image {size('.data')}, .got {size('.got')}, .ARM.exidx {size('.ARM.exidx')}]")
    print(f"budget: static RAM {ram} B of {args.ram} B ({ram * 100 // args.ram}%)"
          f"  [.data {size('.data')}, .bss {size('.bss')}; stack {stack} B apart]")
    if objects:
        print("budget: flash by object: " + ", ".join(f"{o} {s}" for o, s in objects.most_common(6)))
    print(f"budget: biggest frames (limit {args.frame} B), of {len(frames)} functions:")
    for (raw, s), shown in zip(top, names):
        print(f"  {s:6d}  {shown[:140]}")

    problems = []
    for function, instruction in r10_clobbers(args.elf):
        problems.append(f"r10 (Swift's self register, callee-saved) written without being saved in "
                        f"{demangle([function])[0]}: {instruction}")
    if flash > args.flash:
        problems.append(f"flash {flash} B is over the budget of {args.flash} B by {flash - args.flash} B")
    if ram > args.ram:
        problems.append(f"static RAM (data+bss) {ram} B is over the budget of {args.ram} B by {ram - args.ram} B")
    for (raw, s), shown in zip(top, names):
        if s > args.frame:
            problems.append(f"stack frame of {s} B over the {args.frame} B limit: {shown}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"flash": flash, "static_ram": ram, "stack_size": stack, "text": size(".text"),
                       "data": size(".data"), "bss": size(".bss"),
                       "frames": [{"function": shown, "bytes": s} for (raw, s), shown in zip(top, names)],
                       "flash_by_object": dict(objects.most_common()),
                       "budgets": {"flash": args.flash, "static_ram": args.ram, "frame": args.frame},
                       "problems": problems}, f, indent=1)
    for p in problems:
        print(f"budget: FAILED: {p}", file=sys.stderr)
    if not problems:
        print("budget: ok (flash, static RAM, frames)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
