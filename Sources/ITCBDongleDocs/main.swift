// itcb-dongle-docs: the man page and the shell completion of itcb-dongle, written
// at build time (`make docs`, Makefile) from the program's one option table
// (Sources/ITCBOptions), so the shipped binary carries no generator.
//
//   itcb-dongle-docs man-page VERSION      roff on stdout, dated SOURCE_DATE_EPOCH (else today)
//   itcb-dongle-docs completion SHELL      bash, zsh or fish
import Foundation
import ITCBOptions

/// Text for roff: backslashes, dashes and a leading dot or quote escaped.
func roff(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\e"
        case "-": out += "\\-"
        default: out.unicodeScalars.append(scalar)
        }
    }
    if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
    return out
}

/// The man page (itcb-dongle(1)) of `version`, dated `date` (YYYY-MM-DD).
func manPage(version: String, date: String) -> String {
    var out = [".TH \(roff(Program.name.uppercasedASCII())) 1 \"\(date)\" \"\(roff(Program.name)) \(version)\" \"User Commands\"",
               ".SH NAME", "\(roff(Program.name)) \\- \(roff(String(Program.abstract.dropLast())))",
               ".SH SYNOPSIS", ".nf"]
    out += Program.usage.map(roff) + [".fi", ".SH DESCRIPTION", ".PP", roff(Program.description), ".SH OPTIONS"]
    for spec in optionTable where !spec.hidden {
        var names = spec.short.map { "\\fB\\-\(String(Unicode.Scalar($0)))\\fR, " } ?? ""
        names += "\\fB\(roff("--" + spec.name))\\fR"
        if let value = spec.value { names += " \\fI\(roff(value))\\fR" }
        out += [".TP", names, roff(spec.fullHelp)]
    }
    out += [".SH EXIT STATUS", roff(Program.exitCodes), ".SH EXAMPLES", ".nf"] + Program.examples.map(roff) + [".fi"]
    out += [".SH FILES",
            ".TP", "\\fI/etc/default/itcb\\-dongle\\fR",
            "Options of the kiosk service (ITCB_ROLE, ITCB_NAME, ITCB_ANSWERS, ITCB_QUESTION, ITCB_LOG_LEVEL, ITCB_EXTRA_ARGS).",
            ".TP", "\\fI/etc/itcb\\-dongle/dongles\\fR",
            "The USB dongles (VID:PID or bus\\-port path) that start the service when plugged in.",
            ".TP", "\\fI/etc/itcb\\-dongle/<bus\\-port>.conf\\fR",
            "One dongle's own options (its ITCB_NAME, say), over /etc/default/itcb\\-dongle, for its instance itcb\\-dongle@<bus\\-port>.service.",
            ".TP", "\\fI/var/log/itcb\\-dongle\\fR",
            "The one directory the service may write to for you (e.g. \\-\\-btsnoop files); its metrics files go to /var/lib/itcb\\-dongle.",
            ".SH SEE ALSO",
            "\\fBsystemctl\\fR(1), \\fBudevadm\\fR(8), \\fBbtmon\\fR(1); /usr/share/doc/itcb\\-dongle/README.md and,",
            "beside it, docs/COMMAND\\-LINE.md (every option), docs/DEPLOYMENT.md (kiosks, metrics),",
            "docs/DONGLES.md (controllers and firmware)"]
    return out.joined(separator: "\n") + "\n"
}

/// SOURCE_DATE_EPOCH's day (reproducible builds), else today's, as YYYY-MM-DD (UTC).
func manPageDate() -> String {
    var seconds = time_t(time(nil))
    if let epoch = getenv("SOURCE_DATE_EPOCH"), let value = Int(String(cString: epoch)) { seconds = time_t(value) }
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
}

/// A completion script for bash, zsh or fish; nil for another shell.
func completionScript(shell: String) -> String? {
    let visible = optionTable.filter { !$0.hidden }
    func quoted(_ words: [String]) -> String { words.map { "'\($0)'" }.joined(separator: " ") }
    switch shell {
    case "bash":
        var lines = ["# bash completion for itcb-dongle (generated from its option table)",
                     "_itcb_dongle() {",
                     "    local cur prev words",
                     "    cur=\"${COMP_WORDS[COMP_CWORD]}\"",
                     "    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
                     "    case \"$prev\" in"]
        for spec in visible where spec.value != nil {
            lines.append("        '--\(spec.name)')")
            switch spec.completion {
            case .words(let words):
                lines.append("            words=(\(quoted(words)))")
                lines.append("            COMPREPLY=($(compgen -W \"${words[*]}\" -- \"$cur\"))")
            case .file: lines.append("            COMPREPLY=($(compgen -f -- \"$cur\"))")
            case .directory: lines.append("            COMPREPLY=($(compgen -d -- \"$cur\"))")
            case .none: lines.append("            COMPREPLY=()")
            }
            lines.append("            return ;;")
        }
        lines += ["    esac",
                  "    words=(\(quoted(visible.flatMap { spec in (spec.short.map { ["-" + String(Unicode.Scalar($0))] } ?? []) + ["--" + spec.name] })))",
                  "    COMPREPLY=($(compgen -W \"${words[*]}\" -- \"$cur\"))",
                  "}",
                  "complete -F _itcb_dongle itcb-dongle"]
        return lines.joined(separator: "\n") + "\n"
    case "zsh":
        var lines = ["#compdef itcb-dongle", "# zsh completion for itcb-dongle (generated from its option table)", "_arguments -s \\"]
        for spec in visible {
            let help = spec.help.split(separator: ".", maxSplits: 1).first.map(String.init) ?? spec.help
            let escaped = help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "\\[")
                .replacingOccurrences(of: "]", with: "\\]").replacingOccurrences(of: ":", with: "\\:")
            let names = spec.short.map { "(-\(String(Unicode.Scalar($0))) --\(spec.name))'{-\(String(Unicode.Scalar($0))),--\(spec.name)}'" }
                ?? (spec.repeats ? "*--\(spec.name)" : "--\(spec.name)")
            var action = ""
            if let value = spec.value {
                switch spec.completion {
                case .words(let words): action = ":\(value):(\(words.joined(separator: " ")))"
                case .file: action = ":\(value):_files"
                case .directory: action = ":\(value):_files -/"
                case .none: action = ":\(value): "
                }
            }
            lines.append("  '\(names)[\(escaped)]\(action)' \\")
        }
        lines[lines.count - 1].removeLast(2)
        return lines.joined(separator: "\n") + "\n"
    case "fish":
        var lines = ["# fish completion for itcb-dongle (generated from its option table)"]
        for spec in visible {
            var line = "complete -c itcb-dongle -l \(spec.name)"
            if let short = spec.short { line += " -s \(String(Unicode.Scalar(short)))" }
            if spec.value != nil {
                switch spec.completion {
                case .words(let words): line += " -x -a '\(words.joined(separator: " "))'"
                case .file: line += " -r -F"
                case .directory: line += " -x -a '(__fish_complete_directories)'"
                case .none: line += " -x"
                }
            }
            let help = spec.help.split(separator: ".", maxSplits: 1).first.map(String.init) ?? spec.help
            line += " -d '\(help.replacingOccurrences(of: "'", with: "\\'"))'"
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    default:
        return nil
    }
}



func fail(_ message: String) -> Never {
    FileHandle.standardError.write(("itcb-dongle-docs: " + message + "\n").data(using: .utf8)!)
    exit(2)
}

let arguments = CommandLine.arguments.dropFirst()
switch (arguments.first, arguments.count) {
case ("man-page", 2):
    print(manPage(version: arguments.last!, date: manPageDate()), terminator: "")
case ("completion", 2):
    guard let script = completionScript(shell: arguments.last!) else {
        fail("the shell must be bash, zsh or fish (got '\(arguments.last!)')")
    }
    print(script, terminator: "")
default:
    fail("usage: itcb-dongle-docs man-page VERSION | completion bash|zsh|fish")
}
