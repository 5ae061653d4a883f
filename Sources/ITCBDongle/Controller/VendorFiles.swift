import CLinux
import BLEHost
import Chipsets

/// The files a chipset set-up asks for, read whole and kept until the session
/// ends (the loaders read them in place), and the set-up's log lines. Its
/// steps are out of line: cold, they made the run loop's frame and spills larger.
struct VendorFiles {
    var firmwareFile: UnsafeMutableRawBufferPointer? = nil
    var companionFile: UnsafeMutableRawBufferPointer? = nil
    /// The firmware file read (for the failure line).
    var firmwarePath = ""
    /// The "firmware loaded" line was written (or there was nothing to say).
    var reported = false

    var firmware: UnsafeRawBufferPointer { ChipsetSetup.bytes(firmwareFile) }
    var companion: UnsafeRawBufferPointer { ChipsetSetup.bytes(companionFile) }

    mutating func release() {
        free()
        firmwareFile = nil
        companionFile = nil
    }

    func free() {
        firmwareFile?.deallocate()
        companionFile?.deallocate()
    }

    /// Reads what the set-up asks for; false (with the error line) when a required file is missing or refused.
    /// A chipset that runs from ROM without its file gets no bytes and a warning.
    @inline(never) mutating func read(for setup: borrowing VendorSetup, directory: String) -> Bool {
        release()
        firmwarePath = ""
        guard let description = setup.describe() else { return false }
        let facts = ChipsetFacts(description)
        let folder = built("\(directory)/\(facts.info.directory)")
        let limit = facts.info.maximumFileSize
        let request = description.request
        // The names in the chipset's order, each tried until one is read; all
        // of them, " or " between, for the line when none is there (one text
        // built as they come: no array of paths, none joined after).
        var tried = BuiltText.Builder()
        var count = 0
        var refused: (path: String, problem: FileProblem)? = nil
        request.forEachCandidate { name in tryFile(VendorFiles.path(folder, name), limit, &tried, &count, &refused) }
        guard firmwareFile != nil else {
            // Only a file that is not there is "missing"; one that is there says what is wrong with it.
            // Names made from what the controller reported: printed escaped (UntrustedText), where printed.
            let (path, problem) = refused ?? (BuiltText(tried).string, .missing)
            // Built either way: one emit at the line's level (Log.write's test is emit's own).
            Log.emit(request.optional ? .warning : .error, VendorFiles.line(facts, "firmware file", path, problem, fromROM: request.optional))
            return request.optional
        }
        let companionPath = request.companion.withBytes { VendorFiles.path(folder, $0) }
        var companionProblem = FileProblem.missing
        if !request.companion.isEmpty {
            do throws(FileProblem) {
                companionFile = try readRegularFile(cPath(companionPath), limit: limit)
            } catch {
                companionProblem = error
            }
        }
        if companionFile == nil, request.companionRequired {
            Log.error(VendorFiles.line(facts, "config file", companionPath, companionProblem))
            return false
        }
        // One text, the companion appended to it: a String made for " and …" was inlined String interpolation.
        var line: BuiltText = "\(escapedText: facts.label): loading \(escaped: firmwarePath)"
        if companionFile != nil { line.append(" and \(escaped: companionPath)") }
        Log.info(line)
        return true
    }

    /// A file the set-up cannot have, in one line: missing (and the package that
    /// has it), or what is there instead (a directory, a FIFO, too large, a loop).
    /// `fromROM`: the chipset runs without it (a warning, no package named).
    static func line(_ facts: ChipsetFacts, _ what: StaticString, _ path: String, _ problem: FileProblem,
                     fromROM: Bool = false) -> BuiltText {
        var text: BuiltText = "\(escapedText: facts.label): \(what) \(escaped: path) \(problem.clause)"
        if fromROM {
            text.append("; the controller runs from its ROM")
        } else if problem == .missing {
            text.append("; it is in the Debian package \(facts.info.package)")
        }
        return text
    }

    /// The set-up handed over to the host: what it loaded, and an address the
    /// controller's whole model shares is not used as the public one.
    @inline(never) mutating func setupEnded(_ setup: borrowing VendorSetup, _ configuration: inout HostConfiguration) {
        reportLoaded(setup)
        guard let shared = setup.status.sharedDefaultAddress, let facts = setup.facts() else { return }
        let why = built("\(escapedText: facts.label): its address \(shared.string) is a default every unit of the model shares")
        if configuration.forceRandomAddress {
            Log.info("\(why); --address is used")
            return
        }
        configuration.forceRandomAddress = true
        Log.info("\(why); using the static random address \(configuration.staticAddress.string) (derived from the machine id) instead")
    }

    /// One candidate (until a file is read): named in `tried`, read, or why
    /// not kept in `refused` (the first refusal). Outlined: forEachCandidate
    /// calls its body from two places.
    @inline(never)
    private mutating func tryFile(_ path: String, _ limit: Int, _ tried: inout BuiltText.Builder, _ count: inout Int,
                                  _ refused: inout (path: String, problem: FileProblem)?) {
        guard firmwareFile == nil else { return }
        if count > 0 { tried.appendLiteral(" or ") }
        tried.appendInterpolation(path)
        count += 1
        do throws(FileProblem) {
            firmwareFile = try readRegularFile(cPath(path), limit: limit)
            firmwarePath = path
        } catch {
            if error != .missing, refused == nil { refused = (path, error) }
        }
    }

    /// A name under `folder`: each candidate (forEachCandidate calls its body from two places) and the companion.
    @inline(never)
    static func path(_ folder: String, _ name: UnsafeRawBufferPointer) -> String {
        built("\(folder)/\(bytes: name)")  // repaired once, as a whole: the same text
    }

    /// Once the host takes over: what was loaded, if anything. The files are no longer needed.
    @inline(never) mutating func reportLoaded(_ setup: borrowing VendorSetup) {
        reported = true
        defer { release() }
        guard let facts = setup.facts() else { return }
        ChipsetReport.line = built("\(escapedText: facts.label), \(firmwarePath.isEmpty ? "no file read" : firmwarePath.escaped) (Debian package \(facts.info.package))")
        switch facts.summaryLevel {
        case .info: Log.info("\(escapedText: facts.label): \(escapedText: facts.summary)")
        case .debug: Log.debug("\(escapedText: facts.label): \(escapedText: facts.summary)")
        case .none: break
        }
    }

    /// The set-up failed: why, and which file.
    @inline(never) func logFailure(_ setup: borrowing VendorSetup) {
        guard let facts = setup.facts() else {
            Log.error("controller refused Read Local Version Information during the chipset probe")
            return
        }
        // One builder, each piece appended to it (no BuiltText made per piece and copied in).
        var text = BuiltText.Builder()
        text.appendInterpolation(escapedText: facts.label)
        text.appendLiteral(": ")
        text.appendInterpolation(facts.info.failureVerb)
        text.appendLiteral(": ")
        text.appendInterpolation(bytes: UnsafeRawBufferPointer(facts.failure.bytes))
        // It may name what the controller reported (a firmware id): escaped.
        var detail = Capacity.ChipsetText()
        setup.writeFailureDetail(into: &detail)
        if !detail.isEmpty {
            text.appendLiteral(": ")
            text.appendInterpolation(escapedText: detail)
        }
        if !firmwarePath.isEmpty {
            text.appendLiteral(" (")
            text.appendInterpolation(escaped: firmwarePath)
            text.appendLiteral(")")
        }
        Log.error(BuiltText(text))
    }

    /// The controller went silent during the set-up: which one.
    @inline(never) static func silentPhase(_ setup: borrowing VendorSetup) -> String {
        guard let facts = setup.facts() else { return "the chipset probe (Reset, Read Local Version)" }
        return built("the \(facts.info.vendor) \(facts.info.setupName)")
    }
}
