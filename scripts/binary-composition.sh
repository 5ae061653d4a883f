#!/usr/bin/env bash
# Where a binary's bytes are: its composition by module and its largest
# symbols, from the symbol table of the unstripped binary.
#
#   nm --size-sort --print-size   every sized symbol (nm -l adds its source
#                                 file where the binary has line information)
#   readelf -s                    the object file a local symbol came from
#                                 (the FILE symbols: OUTLINED_FUNCTION_n of
#                                 the machine outliner belongs to its module)
#   swift demangle / c++filt      the names
#   size -A                       the sections, which the sum is checked against
#
# Groups. A Swift symbol belongs to the module that declares the entity it is
# code for (its demangled name, specialisation arguments left aside: the
# stdlib's Array.append specialised for one of our types is the stdlib's; the
# core's Host.handleATT specialised for the platform's role is the core's; a
# closure is its enclosing function's; a conformance's witness is the
# conformance's module). So each Swift module of the package (BLEHost, the
# host core; EightBall; Chipsets; ITCBOptions, the option table; ITCBDongle,
# the platform layer) is a row; "Swift runtime and stdlib" is module Swift
# and the runtime's swift_* functions; "Unicode data tables" is
# libswiftUnicodeDataTables (the _swift_stdlib_* tables, nfd/normData/
# grapheme/mappings, and their lookup functions); "C" is everything with a C
# name (crt, libc glue, our CLinux shims); "other" is what none of these
# claims. A C binary (no Swift symbols) has C rows only: by source directory
# (relative to --source-root, two levels deep) where it has line information,
# else one C row.
#
# Bytes are counted once per address (lld's identical code folding gives
# one function several names) and within the text+data of `size -A` (every
# allocated section that is in the file; .bss is not). What no symbol covers
# is printed as "unattributed", by section: string literals and constants
# without a symbol in .rodata, relocations and the dynamic symbol table,
# unwind tables, alignment padding. Attributed + unattributed = text+data,
# checked: the script exits 1 if the sum and `size -A` disagree.
#
# Usage: scripts/binary-composition.sh [BINARY] [--top N] [--btstack DIR]
#                                       [--markdown] [--source-root DIR]
#   BINARY   default $ITCB_DONGLE_BIN, else .build-embedded/itcb-dongle (the
#            shipped Embedded Swift build: scripts/build-embedded.sh keeps it
#            unstripped and writes the stripped copy to
#            .build-embedded/obj/itcb-dongle.stripped)
#   --top N  the N largest symbols (default 15; 0: none)
#   --btstack DIR, or env BTSTACK_DIR: also build BTstack's posix-h4
#            gatt_counter (an LE peripheral: a GATT server with a notified
#            characteristic, the nearest BTstack example to the 8-Ball) from
#            the BTstack tree DIR, with its own Makefile and the system cc, in
#            a temporary directory (nothing is written under DIR or the
#            repository; nothing is fetched: TI's CC256x init script, which the
#            Makefile downloads, is an empty stub, see below), and measure it
#            the same way, then print the two side by side.
#            BTSTACK_CFLAGS / BTSTACK_LDFLAGS are added to BTstack's own flags
#            (default none: its Makefile's -g, no -O).
#   --markdown  the side-by-side table as Markdown (docs/PERFORMANCE.md)
# Needs binutils (nm, readelf, size, strip); swift (or swift-demangle) for
# Swift names, c++filt for C++ ones; python3; for --btstack, cc and make.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=""
top=15
markdown=0
source_root=""
btstack=${BTSTACK_DIR:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --top) top=$2; shift ;;
        --btstack) btstack=$2; shift ;;
        --markdown) markdown=1 ;;
        --source-root) source_root=$2; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "binary-composition: unknown option $1" >&2; exit 2 ;;
        *) binary=$1 ;;
    esac
    shift
done
binary=${binary:-${ITCB_DONGLE_BIN:-.build-embedded/itcb-dongle}}
[ -f "$binary" ] || { echo "binary-composition: no binary at $binary (scripts/build-embedded.sh)" >&2; exit 1; }
case "$top" in ''|*[!0-9]*) echo "binary-composition: --top takes a number" >&2; exit 2 ;; esac

measure=("$binary" "$source_root" "$(basename "$binary")")
if [ -n "$btstack" ]; then
    [ -f "$btstack/port/posix-h4/Makefile" ] || { echo "binary-composition: $btstack is not a BTstack tree (no port/posix-h4/Makefile)" >&2; exit 1; }
    btstack=$(cd "$btstack" && pwd)
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/btstack-posix-h4.XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    # BTstack's posix-h4 Makefile, run from the scratch directory: its objects and
    # the generated gatt_counter.h land here; main.c and btstack_config.h are read
    # from the tree.
    cat > "$scratch/Makefile" <<MAKE
BTSTACK_ROOT := $btstack
include \$(BTSTACK_ROOT)/port/posix-h4/Makefile
VPATH += \$(BTSTACK_ROOT)/port/posix-h4
CFLAGS += -I\$(BTSTACK_ROOT)/port/posix-h4
MAKE
    # The posix-h4 port links TI's CC256x service pack, which its Makefile
    # downloads and converts: chip firmware, not the stack. An empty one here,
    # so that nothing is fetched (the real one is data for TI chips only).
    cat > "$scratch/bluetooth_init_cc2564C_1.5.c" <<'C'
#include <stdint.h>
const uint8_t cc256x_init_script[] = {0};
const uint32_t cc256x_init_script_size = 0;
uint16_t btstack_chipset_cc256x_lmp_subversion(void) { return 0; }
C
    echo "binary-composition: building BTstack's posix-h4 gatt_counter from $btstack in $scratch" >&2
    if ! CFLAGS=${BTSTACK_CFLAGS:-} LDFLAGS=${BTSTACK_LDFLAGS:-} \
            make -C "$scratch" -j"$(nproc)" -o bluetooth_init_cc2564C_1.5.c gatt_counter > "$scratch/build.log" 2>&1; then
        tail -20 "$scratch/build.log" >&2
        echo "binary-composition: the BTstack build failed" >&2
        exit 1
    fi
    measure+=("$scratch/gatt_counter" "$btstack" "BTstack posix-h4 gatt_counter")
fi

python3 - "$top" "$markdown" "${measure[@]}" <<'PYTHON'
import os, re, shutil, subprocess, sys, tempfile

top, markdown = int(sys.argv[1]), sys.argv[2] == "1"
targets = list(zip(sys.argv[3::3], sys.argv[4::3], sys.argv[5::3]))

def run(*command, stdin=None):
    return subprocess.run(command, input=stdin, capture_output=True, text=True, check=True).stdout

def demangler():
    for command in (["swift", "demangle"], ["swift-demangle"]):
        if shutil.which(command[0]):
            try:
                run(*command, "--compact", stdin="$s4main\n")
                return command
            except (subprocess.CalledProcessError, OSError):
                pass
    return None
SWIFT_DEMANGLE = demangler()

def is_swift(name):
    return re.match(r"^_?\$[se]", name) is not None

def demangle(names, simplified=False):
    """One name per line in, one per line out: Swift through swift demangle, C++ through c++filt."""
    out = dict((n, n) for n in names)
    swift = [n for n in names if is_swift(n)]
    if swift and SWIFT_DEMANGLE:
        flags = ["--compact"] + (["--simplified"] if simplified else [])
        lines = run(*SWIFT_DEMANGLE, *flags, stdin="\n".join(swift) + "\n").splitlines()
        if len(lines) == len(swift):
            out.update(zip(swift, lines))
    cxx = [n for n in names if n.startswith("_Z")]
    if cxx and shutil.which("c++filt"):
        lines = run("c++filt", stdin="\n".join(cxx) + "\n").splitlines()
        if len(lines) == len(cxx):
            out.update(zip(cxx, lines))
    return out

def strip_angles(text):
    text = text.replace("->", "→")
    out, depth = [], 0
    for c in text:
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(c)
    return "".join(out)

def swift_module(full):
    """The module of the entity a demangled Swift name is code for."""
    m = re.search(r" in conformance .* in (\w+)$", full)
    if m:
        return m.group(1)
    text = re.sub(r"\(extension in (\w+)\):", r"\1.", strip_angles(full))
    if " in " in text:   # closure #1 (…) in closure #2 in M.f(…): the enclosing function's
        text = text.rsplit(" in ", 1)[1]
    m = re.search(r"(?<![\w.])([A-Za-z_]\w*)\.", text)
    return m.group(1) if m else None

def mangled_module(name):
    """The first context of a mangled name (one-time initialisation tokens demangle without it)."""
    m = re.match(r"^_?\$[se](\d+)", name)
    if m:
        return name[m.end():m.end() + int(m.group(1))]
    if re.match(r"^_?\$[se]So", name):
        return "__C"
    return "Swift" if re.match(r"^_?\$[se][sS]", name) else None

LABELS = {
    "ITCBDongle": "ITCBDongle (platform layer)",
    "ITCBOptions": "ITCBOptions (option table)",
    "BLEHost": "BLEHost (host core)",
    "EightBall": "EightBall (the game)",
    "Chipsets": "Chipsets (chipset set-ups)",
}
STDLIB = "Swift runtime and stdlib"
UNICODE = "Unicode data tables"
C_GLUE = "C: crt, libc glue, C shims"
OTHER = "other"

def sections_of(binary):
    """Allocated sections: name → (address, size, in the file)."""
    sections = {}
    for line in run("readelf", "-SW", binary).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)\s+\d+\s+\d+\s+\d+$", line)
        if m and "A" in m.group(5) and "T" not in m.group(5):
            sections[m.group(1)] = (int(m.group(3), 16), int(m.group(4), 16), m.group(2) != "NOBITS")
    return sections

def size_a(binary):
    sizes = {}
    for line in run("size", "-A", binary).splitlines():
        m = re.match(r"^(\.\S+)\s+(\d+)\s+(\d+)$", line)
        if m:
            sizes[m.group(1)] = int(m.group(2))
    return sizes

def object_files(binary):
    """(address, name) → the FILE symbol before it in .symtab (local symbols only)."""
    files, current = {}, None
    for line in run("readelf", "-sW", binary).splitlines():
        parts = line.split()
        if len(parts) < 8 or not parts[0].endswith(":"):
            continue
        if parts[3] == "FILE":
            current = parts[7]
        elif parts[4] == "LOCAL" and current:
            files[(int(parts[1], 16), parts[7])] = current
    return files

def compose(binary, source_root):
    sections = sections_of(binary)
    in_file = {n: s for n, s in sections.items() if s[2]}
    text_data = sum(s[1] for s in in_file.values())
    by_size_a = size_a(binary)
    check = {n: (s[1], by_size_a.get(n)) for n, s in in_file.items() if by_size_a.get(n) != s[1]}

    line_info = False
    symbols = []
    for line in run("nm", "--size-sort", "--print-size", "-l", binary).splitlines():
        where = None
        if "\t" in line:
            line, where = line.split("\t", 1)
            where = where.rsplit(":", 1)[0]
            line_info = True
        parts = line.split(None, 3)
        if len(parts) != 4 or parts[2] in "Uw":
            continue
        symbols.append([int(parts[0], 16), int(parts[1], 16), parts[2], parts[3].split("@")[0], where])
    files = object_files(binary)
    swift = any(is_swift(s[3]) for s in symbols)
    full = demangle([s[3] for s in symbols if is_swift(s[3])]) if swift else {}

    # A C binary with line information: rows by source directory.
    if line_info and not swift:
        paths = [s[4] for s in symbols if s[4]]
        root = source_root or os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""
        dirs = {}
        for p in paths:
            dirs.setdefault(os.path.basename(p), os.path.dirname(p))

    def c_group(symbol):
        address, _, _, name, where = symbol
        if not swift and not line_info:
            return "C"
        if swift:
            return C_GLUE
        if not where:   # a static without line information: its FILE symbol's directory
            base = files.get((address, name))
            where = os.path.join(dirs[base], base) if base in dirs else None
        if not where:
            return C_GLUE
        relative = os.path.relpath(os.path.dirname(where), root)
        if relative.startswith(".."):
            return "C: build directory"
        return "C: " + ("/".join(relative.split("/")[:2]) if relative != "." else "(top)")

    def group(symbol):
        address, _, _, name, _ = symbol
        if is_swift(name):
            module = swift_module(full.get(name, name)) or mangled_module(name)
            if module == "Swift":
                return STDLIB
            if module == "__C":
                return C_GLUE
            return LABELS.get(module, module) if module else OTHER
        source = files.get((address, name), "")
        if "_swift_stdlib_" in name or re.match(r"Unicode\w*\.cpp$", source):
            return UNICODE
        if re.match(r"^_?swift_", name):
            return STDLIB
        if name.startswith("OUTLINED_FUNCTION_"):
            module = source[:-2] if source.endswith(".o") else None
            return LABELS.get(module, module) if module else OTHER
        return c_group(symbol)

    # Each byte once: by address, the longest name first; a symbol that starts inside
    # another counts only past its end. Bytes outside the file's sections (.bss) apart.
    symbols.sort(key=lambda s: (s[0], -s[1]))
    ranges = sorted(in_file.items(), key=lambda kv: kv[1][0])
    groups, counts, sources, bss, folded = {}, {}, {}, 0, 0
    covered = dict((n, 0) for n in in_file)
    largest = []
    end = 0
    for symbol in symbols:
        address, size = symbol[0], symbol[1]
        start = max(address, end)
        if start >= address + size:
            folded += 1
            continue
        section = next((n for n, (a, s, _) in ranges if a <= start < a + s), None)
        if section is None:
            bss += address + size - start
            end = address + size
            continue
        a, s, _ = in_file[section]
        counted = min(address + size, a + s) - start
        end = start + counted
        g = group(symbol)
        groups[g] = groups.get(g, 0) + counted
        counts[g] = counts.get(g, 0) + 1
        if g.startswith("C: ") and symbol[4]:
            per_file = sources.setdefault(g, {})
            base = os.path.basename(symbol[4])
            per_file[base] = per_file.get(base, 0) + counted
        covered[section] += counted
        largest.append((counted, g, symbol[3]))
    unattributed = {n: in_file[n][1] - covered[n] for n in in_file if in_file[n][1] - covered[n] > 0}
    attributed = sum(groups.values())
    largest.sort(reverse=True)
    stripped = None
    with tempfile.TemporaryDirectory() as scratch:
        for strip in ("strip", "llvm-strip", "aarch64-linux-gnu-strip"):
            if shutil.which(strip):
                if subprocess.run([strip, "-o", os.path.join(scratch, "s"), binary], capture_output=True).returncode == 0:
                    stripped = os.path.getsize(os.path.join(scratch, "s"))
                    break
    machine = re.search(r"Machine:\s+(.*)", run("readelf", "-h", binary))
    return dict(binary=binary, machine=machine.group(1).strip() if machine else "?", stripped=stripped,
                text_data=text_data, groups=groups, counts=counts, sources=sources, unattributed=unattributed,
                attributed=attributed, bss=bss, folded=folded, largest=largest, check=check,
                sections=in_file, nobits=sum(s[1] for s in sections.values() if not s[2]))

ORDER = [LABELS[k] for k in ("ITCBDongle", "ITCBOptions", "BLEHost", "EightBall", "Chipsets")] + [STDLIB, UNICODE]

def rows(c):
    """Groups, ours first in a fixed order, then by size; small C directories folded together."""
    groups, counts = dict(c["groups"]), dict(c["counts"])
    small = [g for g in groups if g.startswith("C: ") and g != C_GLUE and groups[g] < c["text_data"] / 100]
    last = [C_GLUE, OTHER]
    if len(small) > 1:
        merged = "C: smaller directories (%d)" % len(small)
        groups[merged] = sum(groups.pop(g) for g in small)
        counts[merged] = sum(counts.pop(g, 0) for g in small)
        last.insert(0, merged)
    head = [g for g in ORDER if g in groups]
    tail = sorted((g for g in groups if g not in head and g not in last), key=lambda g: -groups[g])
    return [(g, groups[g], counts.get(g, 0)) for g in head + tail + [g for g in last if g in groups]]

def short(group):
    """A group's name in the list of symbols."""
    if group in (C_GLUE, "C"):
        return "C"
    if group == STDLIB:
        return "stdlib"
    return group[3:] if group.startswith("C: ") else group.split(" ")[0]

HINTS = {".rodata": "literals, constants", ".eh_frame": "unwind tables", ".rela.dyn": "relocations"}

def unattributed_note(c, n=4):
    parts = sorted(c["unattributed"].items(), key=lambda kv: -kv[1])
    text = ", ".join(f"{name} {size:,}" + (f" ({HINTS[name]})" if name in HINTS else "") for name, size in parts[:n])
    return text + (f", {len(parts) - n} more" if len(parts) > n else "")

def shorten(name, width=110):
    name = re.sub(r"\s+", " ", name)
    return name if len(name) <= width else name[:width - 1] + "…"

failed = False
results = []
for binary, root, label in targets:
    c = compose(binary, root)
    c["label"] = label
    results.append(c)
    td = c["text_data"]
    pct = lambda b: f"{100 * b / td:5.1f} %"
    stripped = f", {c['stripped']:,} B stripped" if c["stripped"] is not None else ""
    print(f"binary-composition: {binary} ({c['machine']}{stripped}): text+data {td:,} B (size -A)")
    print(f"  {'':38} {'bytes':>10} {'':>7} {'symbols':>8}")
    for g, b, n in rows(c):
        files = sorted(c["sources"].get(g, {}).items(), key=lambda kv: -kv[1])[:3]
        note = "   " + ", ".join(f"{f} {size:,}" for f, size in files) if files else ""
        print(f"  {g:38} {b:>10,} {pct(b)} {n:>8,}{note}")
    un = sum(c["unattributed"].values())
    print(f"  {'unattributed (no symbol)':38} {un:>10,} {pct(un)}   {unattributed_note(c)}")
    total = c["attributed"] + un
    ok = total == td and not c["check"]
    print(f"  {'total':38} {total:>10,} {pct(total)}   "
          + ("= the allocated sections in the file (size -A): ok" if ok else f"!= size -A {td:,}: {c['check']}"))
    print(f"  not in the file: .bss and the like {c['nobits']:,} B ({c['bss']:,} B of symbols)"
          + (f"; {c['folded']:,} names share another's bytes (identical code folding, aliases)" if c["folded"] else ""))
    failed |= not ok
    if not c["largest"]:
        print("  no symbols: measure the unstripped binary")
    elif top:
        names = demangle([n for _, _, n in c["largest"][:top]], simplified=True)
        print(f"  the {min(top, len(c['largest']))} largest symbols:")
        for size, g, name in c["largest"][:top]:
            print(f"  {size:>8,}  {short(g):<18} {shorten(names.get(name, name))}")

if len(results) > 1:
    sized = [dict((g, b) for g, b, _ in rows(c)) for c in results]
    labels = list(sized[0]) + [g for g in sized[1] if g not in sized[0]]
    labels = [g for g in labels if g not in (C_GLUE, OTHER)] + [g for g in (C_GLUE, OTHER) if g in labels]
    cell = lambda c, b: f"{b:,} B ({100 * b / c['text_data']:.1f} %)" if b else "–"
    names = [c["label"] for c in results]
    table = [("", *names)]
    table += [(g, *(cell(c, sizes.get(g, 0)) for c, sizes in zip(results, sized))) for g in labels]
    table.append(("unattributed (no symbol)", *(cell(c, sum(c["unattributed"].values())) for c in results)))
    table.append(("text+data (size -A)", *(f"{c['text_data']:,} B" for c in results)))
    table.append(("binary, stripped", *(f"{c['stripped']:,} B" if c["stripped"] else "?" for c in results)))
    print()
    if markdown:
        print("| " + " | ".join(table[0]) + " |")
        print("|---|" + "---:|" * len(results))
        for row in table[1:]:
            print("| " + " | ".join(row) + " |")
    else:
        print("binary-composition: side by side")
        width = max(len(v) for row in table for v in row[1:]) + 1
        for row in table:
            print(f"  {row[0]:38} " + " ".join(f"{v:>{width}}" for v in row[1:]))
sys.exit(1 if failed else 0)
PYTHON
