import Testing
import Chipsets
import ITCBOptions
@testable import ITCBDongle
@testable import ITCBDongleDocs

/// The command line's own checks: the parser over the one
/// option table, one message style, repeated options, what the table generates,
/// where a long name is sent. Serialized (as when getopt_long kept its state in libc).
@Suite(.serialized) struct CommandLineTests {
    /// The first problem the parser (and the conversion of the values) finds, or nil.
    func problem(_ arguments: [String]) -> String? {
        switch parseCommandLine(arguments) {
        case .failure(let error): return error.message
        case .success(let parsed):
            do throws(UsageError) {
                _ = try CommandLineSettings(parsed)
                return nil
            } catch {
                return error.message
            }
        }
    }

    @Test func parserMessagesInTheProgramsStyle() {
        #expect(problem(["--role", "peripheal"]) == "--role must be peripheral or central (got 'peripheal')")
        #expect(problem(["--count", "x"]) == "--count must be a number (got 'x')")
        #expect(problem(["--timeout=soon"]) == "--timeout must be a number (got 'soon')")
        #expect(problem(["--role", "central", "--peer"]) == "--peer needs a value")
        #expect(problem(["--rol", "peripheral"]) == "unknown option '--rol'; did you mean '--role'?")
        #expect(problem(["--rol=peripheral"]) == "unknown option '--rol'; did you mean '--role'?")
        #expect(problem(["--frobnicate"]) == "unknown option '--frobnicate'")
        #expect(problem(["-x"]) == "unknown option '-x'")
        #expect(problem(["--json=yes"]) == "--json takes no value (got '--json=yes')")
        #expect(problem(["central"]) == "unexpected argument 'central'; did you mean '--role central'?")
        #expect(problem(["--question", "Will", "it", "rain?"])?.hasPrefix("2 unexpected arguments: 'it', 'rain?' (a value with spaces needs quotes") == true)
        #expect(problem(["--seed", "-5"]) == "--seed: a seed cannot be negative; use 0 to 18446744073709551615 (got '-5')")
    }

    /// What getopt_long said of what it read, the parser that replaced it says too.
    @Test func getoptLongsEdgesAreKept() {
        #expect(problem(["--jso=1"]) == "--jso takes no value (got '--jso=1')")  // an abbreviation getopt_long took
        #expect(problem(["--nam"]) == "--nam needs a value")
        #expect(problem(["--nam", "X"]) == "unknown option '--nam'; did you mean '--name'?")
        #expect(problem(["-hx"]) == "unknown option '-x'")
        #expect(problem(["--=x"]) == "unknown option '--'")
        #expect(problem(["--co"])?.hasPrefix("unknown option '--co'") == true)  // several options begin so
        #expect(try! parseCommandLine(["a", "--json", "-", "b", "--", "--c"]).get().positional == ["a", "-", "b", "--c"])
        #expect(try! parseCommandLine(["--name", "--json"]).get().options.map { $0.value } == ["--json"])
    }

    @Test func bothSpellingsOfAValueAndNegativeNumbers() throws {
        let parsed = try parseCommandLine(["--role=central", "--rssi-min", "-70", "--timeout=0.5", "--question", "--why?"]).get()
        let command = try CommandLineSettings(parsed)
        #expect(command.role == .central && command.rssiMin == -70 && command.timeout == 0.5)
        #expect(command.question == ["--why?"])
        // Options after "--" are arguments.
        #expect(try parseCommandLine(["--json", "--", "--name"]).get().positional == ["--name"])
    }

    @Test func repeatedOptionsAreFoundWithTheirValues() {
        #expect(repeatedOption(givenOptions(["--role", "peripheral", "--role=central"]))
            == "--role is given 2 times ('peripheral', 'central'); give it once (only --question repeats)")
        #expect(repeatedOption(givenOptions(["--json", "--json"])) == "--json is given 2 times; give it once (only --question repeats)")
        #expect(repeatedOption(givenOptions(["--question", "A?", "--question", "B?"])) == nil)
        // A value that looks like an option is a value: --question "--name" once is fine.
        #expect(repeatedOption(givenOptions(["--question", "--name", "--name", "X"])) == nil)
        #expect(repeatedOption(givenOptions(["--name", "X", "--", "--name"])) == nil)
    }

    @Test func givenOptionsPairNamesWithValues() {
        let options = givenOptions(["--role", "central", "--json", "--peer=Kiosk", "--question", "--why?"])
        #expect(options.map { $0.name } == [.role, .json, .peer, .question])
        #expect(options.map { $0.value } == ["central", "", "Kiosk", "--why?"])
    }

    @Test func theTableMakesHelpManPageAndCompletion() throws {
        let help = helpText()
        let page = manPage(version: itcbDongleVersion, date: "2026-11-24")
        let bash = try #require(completionScript(shell: "bash"))
        for spec in optionTable where !spec.hidden {
            #expect(help.contains("--" + spec.name), "\(spec.name) in --help")
            #expect(page.contains("\\fB" + ("--" + spec.name).replacingOccurrences(of: "-", with: "\\-") + "\\fR"), "\(spec.name) in the man page")
            #expect(bash.contains("'--" + spec.name + "'"), "\(spec.name) in the bash completion")
        }
        // Written at build time by itcb-dongle-docs: the program itself has no such option.
        #expect(problem(["--generate-man-page"])?.hasPrefix("unknown option '--generate-man-page'") == true)
        #expect(page.hasPrefix(".TH ITCB\\-DONGLE 1 \"2026-11-24\" \"itcb\\-dongle \(itcbDongleVersion)\""))
        #expect(completionScript(shell: "zsh")?.hasPrefix("#compdef itcb-dongle") == true)
        #expect(completionScript(shell: "fish")?.contains("complete -c itcb-dongle -l role") == true)
        #expect(completionScript(shell: "tcsh") == nil)
        #expect(OptionName.question.takesValue && !OptionName.json.takesValue)
        #expect(OptionName.allCases.filter { $0.role == .peripheral }.map { $0.rawValue }
            == ["name", "answers", "max-centrals", "idle-timeout", "connection-interval", "seed"])
    }

    /// One row per option name, in the names' order: a name the table lacks, or
    /// spells twice, fails here (the settings' switch over them is exhaustive).
    @Test func theTableHasOneRowPerOptionName() {
        #expect(optionTable.map { $0.option } == OptionName.allCases)
        // The parser reads whether an option takes a value from its name; --help shows the row's value name.
        for spec in optionTable { #expect((spec.value != nil) == spec.option.takesValue, "\(spec.name)") }
    }

    /// --firmware-dir's help names every chipset's folder of the table (ChipsetTable), and no other.
    @Test func firmwareDirectoryHelpNamesTheTablesFolders() throws {
        let help = try #require(optionSpec(.firmwareDir)).help
        let named = help.split(separator: " ").filter { $0.hasPrefix("DIR/") }.map { String($0.dropFirst(4).prefix { $0 != "/" }) }
        let folders = (0..<ChipsetTable.count).compactMap { ChipsetTable.info($0).map { "\($0.directory)" } }
        #expect(named == folders, "the help names \(named), the table has \(folders)")
    }

    /// --transport's help lists what TransportSpec.parse reads (written out in the table, a literal).
    @Test func transportHelpIsTheProgramsTransports() throws {
        #expect(try #require(optionSpec(.transport)).help == "The controller: \(Program.transports).")
    }

    @Test func aLongNameIsSaidToGoInTheScanResponse() {
        #expect(advertisedNameNote("Kiosk") == nil)
        #expect(advertisedNameNote("8-Ball12") == nil)  // 8 bytes: whole in the advertising data
        let note = advertisedNameNote("Kiosk in the lobby")
        #expect(note?.hasPrefix("the advertising data carries the name shortened to \"Kiosk in\"; the scan response carries the full name") == true)
        // Cut on a whole character: the two-byte ü would straddle byte 8.
        #expect(advertisedNameNote("Kiosk iü and more")?.contains("\"Kiosk i\"") == true)
        #expect(advertisedNameNote(String(repeating: "x", count: 30))?.contains("its first 29 bytes") == true)
    }

    @Test func jsonErrorKindsFollowTheExitCodes() {
        #expect(JSONOutput.kind(Exit.usage) == "usage")
        #expect(JSONOutput.kind(Exit.transport) == "transport")
        #expect(JSONOutput.kind(Exit.notFound) == "not_found")
        #expect(JSONOutput.kind(130) == "interrupted" && JSONOutput.kind(143) == "interrupted")
    }
}
