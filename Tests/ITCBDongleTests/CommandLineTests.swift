import Testing
@testable import ITCBDongle

/// The command line's own checks (issue 19): one message style, repeated
/// options, what the unit's environment may set, where a long name is sent.
@Suite struct CommandLineTests {
    @Test func parserMessagesInTheProgramsStyle() {
        #expect(parserMessage("The value 'peripheal' is invalid for '--role <peripheral|central>'. Please provide one of 'peripheral' and 'central'.")
            == "--role must be peripheral or central (got 'peripheal')")
        #expect(parserMessage("The value 'x' is invalid for '--count <n>'") == "--count must be a number (got 'x')")
        #expect(parserMessage("Missing value for '--peer <name|address>'") == "--peer needs a value")
        #expect(parserMessage("Unknown option '--rol'. Did you mean '--role'?") == "unknown option '--rol'; did you mean '--role'?")
        #expect(parserMessage("Unexpected argument 'central'") == "unexpected argument 'central'; did you mean '--role central'?")
        #expect(parserMessage("2 unexpected arguments: 'it', 'rain?'").hasSuffix("(a value with spaces needs quotes: --question \"Will it rain?\")"))
    }

    @Test func repeatedOptionsAreFoundWithTheirValues() {
        #expect(repeatedOption(["--role", "peripheral", "--role=central"])
            == "--role is given 2 times ('peripheral', 'central'); give it once (only --question repeats)")
        #expect(repeatedOption(["--json", "--json"]) == "--json is given 2 times; give it once (only --question repeats)")
        #expect(repeatedOption(["--question", "A?", "--question", "B?"]) == nil)
        // A value that looks like an option is a value: --question "--name" once is fine.
        #expect(repeatedOption(["--question", "--name", "--name", "X"]) == nil)
        #expect(repeatedOption(["--name", "X", "--", "--name"]) == nil)
    }

    @Test func givenOptionsPairNamesWithValues() {
        let options = givenOptions(["--role", "central", "--json", "--peer=Kiosk", "--question", "--why?"])
        #expect(options.map(\.name) == ["role", "json", "peer", "question"])
        #expect(options.map(\.value) == ["central", "", "Kiosk", "--why?"])
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
