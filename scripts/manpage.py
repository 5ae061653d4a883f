#!/usr/bin/env python3
"""Writes the itcb-dongle(1) man page (roff) from the program's own help: the
option list, abstracts, defaults and the discussion come from
`itcb-dongle --experimental-dump-help` (swift-argument-parser's description of
the same text `--help` prints), so the man page cannot drift from --help.
scripts/build-deb.sh and scripts/install.sh run it on the binary they ship;
Tests/CLI checks its output.

Usage: scripts/manpage.py BINARY [--date YYYY-MM-DD] > itcb-dongle.1"""
import json
import subprocess
import sys
import time


def roff(text):
    """Escapes text for roff: backslashes, leading dots/quotes, dashes in options."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def option_name(name):
    return ("--" if name["kind"] == "long" else "-") + name["name"]


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    binary = argv[0]
    date = time.strftime("%Y-%m-%d", time.gmtime())
    if "--date" in argv:
        date = argv[argv.index("--date") + 1]
    info = json.loads(subprocess.run([binary, "--experimental-dump-help"], check=True, capture_output=True,
                                     text=True).stdout)["command"]
    version = subprocess.run([binary, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    name = info["commandName"]
    out = [f'.TH {roff(name.upper())} 1 "{date}" "{roff(name)} {version}" "User Commands"',
           ".SH NAME", f"{roff(name)} \\- {roff(info['abstract'].rstrip('.'))}"]

    # The synopsis: the usage lines of --help, verbatim (no filling).
    help_text = subprocess.run([binary, "--help"], check=True, capture_output=True, text=True).stdout
    usage_lines = []
    for line in help_text.split("\n"):
        if line.startswith("USAGE:"):
            usage_lines.append(line[len("USAGE:"):])
        elif usage_lines and line.startswith("       "):
            usage_lines.append(line)
        elif usage_lines:
            break
    usage = "\n".join(usage_lines) or name
    out += [".SH SYNOPSIS", ".nf"] + [roff(line.strip()) for line in usage.split("\n") if line.strip()] + [".fi"]

    out.append(".SH DESCRIPTION")
    discussion = info.get("discussion", "")
    sections = discussion.split("\n\n")
    exit_text, examples = "", ""
    for paragraph in sections:
        if paragraph.startswith("Exit codes:"):
            exit_text = paragraph[len("Exit codes:"):].strip()
        elif paragraph.startswith("Examples:"):
            examples = paragraph[len("Examples:"):].strip("\n")
        else:
            out += [".PP", roff(paragraph.replace("\n", " "))]

    out.append(".SH OPTIONS")
    for argument in info["arguments"]:
        if not argument.get("shouldDisplay", True):
            continue
        names = ", ".join(f"\\fB{roff(option_name(n))}\\fR" for n in argument["names"])
        if argument["kind"] == "option":
            names += f" \\fI{roff(argument.get('valueName', 'value'))}\\fR"
        out += [".TP", names]
        text = argument.get("abstract", "")
        if argument.get("discussion"):
            text += " " + argument["discussion"]
        if "defaultValue" in argument and argument["kind"] == "option":
            text += f" (default: {argument['defaultValue']})"
        if argument.get("isRepeating") and argument["kind"] == "option":
            text += " May be given more than once."
        out.append(roff(text))

    if exit_text:
        out += [".SH EXIT STATUS", roff(exit_text.replace("\n", " "))]
    if examples:
        out += [".SH EXAMPLES", ".nf"] + [roff(line.strip()) for line in examples.split("\n")] + [".fi"]
    out += [".SH FILES",
            ".TP", "\\fI/etc/default/itcb\\-dongle\\fR",
            "Options of the kiosk service (ITCB_ROLE, ITCB_NAME, ITCB_ANSWERS, ITCB_LOG_LEVEL, ITCB_EXTRA_ARGS).",
            ".TP", "\\fI/etc/itcb\\-dongle/dongles\\fR",
            "The USB dongles (VID:PID or bus\\-port path) that start the service when plugged in.",
            ".SH SEE ALSO",
            "\\fBsystemctl\\fR(1), \\fBudevadm\\fR(8), \\fBbtmon\\fR(1); "
            "/usr/share/doc/itcb\\-dongle/README.md"]
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
