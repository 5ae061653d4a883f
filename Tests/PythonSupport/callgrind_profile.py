"""What a callgrind profile says about the peripheral's loop: heap allocations
by caller, calls of named functions (poll: the wake-ups) and the instructions
(scripts/bench-process.sh, scripts/bench-usb.sh).

callgrind counts every call exactly, including those into the C library's
allocator (under callgrind malloc is glibc's own, not replaced as under
memcheck). An allocation is a call of malloc, calloc, realloc, posix_memalign,
aligned_alloc, memalign, valloc or pvalloc from outside that set (glibc's
realloc(NULL) calling malloc is one allocation, not two). Each is charged to
the object file of its caller:

  libusb   the caller is in libusb-1.0 (e.g. its Linux backend's calloc of the
           URB array in every libusb_submit_transfer)
  ours     the caller is in the program itself (our Swift code and the Swift
           runtime linked into it; for the Bumble peripheral: Python, Bumble
           and their extension modules)
  …        a caller in a pass-through library (libc, libstdc++, libgcc, the
           loader: e.g. strdup, operator new) is charged to its own callers,
           in proportion to how often each of them called it

Usage: callgrind_profile.py CALLGRIND.OUT [FUNCTION …]
Prints one JSON object: {"total": …, "ours": …, "libusb": …, "instructions": …,
"calls": {FUNCTION: calls, …}} — calls of each FUNCTION named on the command
line (e.g. libusb_submit_transfer, poll), counted over all callers.
"""
import json
import re
import sys
from collections import defaultdict

ALLOCATORS = {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc"}
# Objects that only pass allocations through to their callers.
PASS_THROUGH = re.compile(r"/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*|libpthread|libdl|vgpreload_[^/]*)[.-][^/]*$")
LIBUSB = re.compile(r"/libusb-1\.0[^/]*$")


def parse(path):
    """-> (functions' objects, call edges {(caller, callee): calls}, summary instructions)."""
    names = {"ob": {}, "fn": {}}
    obj_of = {}  # function -> object
    edges = defaultdict(int)
    current_ob = current_fn = callee = callee_ob = None
    summary = 0

    def name(kind, text):
        # "(id) name" defines id, "(id)" uses it; uncompressed output has the name only.
        match = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not match:
            return text
        if match.group(2) is not None:
            names[kind][match.group(1)] = match.group(2)
        return names[kind].get(match.group(1), text)

    def plain(function):
        return re.sub(r"'\d+$", "", function)  # recursion levels (fn'2) are one function

    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                current_ob = name("ob", line[3:].rstrip("\n"))
            elif line.startswith("fn="):
                current_fn = plain(name("fn", line[3:].rstrip("\n")))
                obj_of.setdefault(current_fn, current_ob)
                callee_ob = None
            elif line.startswith("cob="):
                callee_ob = name("ob", line[4:].rstrip("\n"))
            elif line.startswith("cfn="):
                callee = plain(name("fn", line[4:].rstrip("\n")))
                obj_of.setdefault(callee, callee_ob or current_ob)
            elif line.startswith("calls="):
                edges[(current_fn, callee)] += int(line[6:].split()[0])
                callee_ob = None
            elif line.startswith("summary:"):
                summary = int(line.split()[1])
    return obj_of, edges, summary


def owner(obj):
    if obj and LIBUSB.search(obj):
        return "libusb"
    if obj and PASS_THROUGH.search(obj):
        return None
    return "ours"


def allocations(obj_of, edges):
    callers = defaultdict(list)  # callee -> [(caller, calls)]
    for (caller, callee), n in edges.items():
        callers[callee].append((caller, n))
    totals = defaultdict(float)

    def charge(function, count, depth):
        who = owner(obj_of.get(function))
        if who is not None:
            totals[who] += count
            return
        incoming = [(c, n) for c, n in callers.get(function, ()) if c != function]
        whole = sum(n for _, n in incoming)
        if depth > 20 or whole == 0:
            totals["ours"] += count  # a root in a pass-through library (a thread's start): the program's
            return
        for caller, n in incoming:
            charge(caller, count * n / whole, depth + 1)

    for (caller, callee), n in edges.items():
        if callee in ALLOCATORS and caller not in ALLOCATORS:
            charge(caller, n, 0)
    return totals


def main():
    args = sys.argv[1:]
    obj_of, edges, summary = parse(args[0])
    totals = allocations(obj_of, edges)
    calls = defaultdict(int)
    for (_, callee), n in edges.items():
        calls[callee] += n
    print(json.dumps({
        "instructions": summary,
        "total": round(totals["ours"] + totals["libusb"], 3),
        "ours": round(totals["ours"], 3),
        "libusb": round(totals["libusb"], 3),
        "calls": {f: calls.get(f, 0) for f in args[1:]},
    }))


if __name__ == "__main__":
    main()
