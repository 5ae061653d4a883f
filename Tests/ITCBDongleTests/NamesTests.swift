import BLEHost
import Testing
import ITCBOptions
@testable import ITCBDongle

/// Names for HCI opcodes, company identifiers and LE feature bits, the --controller-info text, the version constant and the
/// command-line checks that the parser does not make.
@Suite struct NamesTests {
    /// Every opcode the core sends (HCIOpcode) has a name of its own.
    @Test func everyOpcodeTheCoreSendsIsNamed() {
        let sent: [UInt16] = [
            HCIOpcode.disconnect, HCIOpcode.setEventMask, HCIOpcode.reset, HCIOpcode.readLocalVersion,
            HCIOpcode.readLocalCommands, HCIOpcode.readLocalFeatures, HCIOpcode.readBufferSize, HCIOpcode.readBDAddr,
            HCIOpcode.leSetEventMask, HCIOpcode.leReadBufferSize, HCIOpcode.leReadLocalFeatures,
            HCIOpcode.leSetRandomAddress, HCIOpcode.leSetAdvertisingParameters, HCIOpcode.leSetAdvertisingData,
            HCIOpcode.leSetScanResponseData, HCIOpcode.leSetAdvertiseEnable, HCIOpcode.leSetScanParameters,
            HCIOpcode.leSetScanEnable, HCIOpcode.leCreateConnection, HCIOpcode.leCreateConnectionCancel,
            HCIOpcode.leConnectionUpdate, HCIOpcode.leLongTermKeyNegativeReply,
            HCIOpcode.leRemoteConnectionParameterReply, HCIOpcode.leRemoteConnectionParameterNegativeReply,
        ]
        for opcode in sent {
            #expect(hciCommandNames(opcode) != nil, "no name for 0x\(hex4(opcode))")
        }
        #expect(Set(sent.compactMap { hciCommandNames($0) }).count == sent.count)
    }

    @Test func opcodeNamesCarryTheOpcode() {
        #expect(hciCommandName(0x200B) == "LE Set Scan Parameters (0x200B)")
        #expect(hciCommandName(0x0C03) == "Reset (0x0C03)")
        #expect(hciCommandName(0x1009) == "Read BD_ADDR (0x1009)")
        #expect(hciCommandName(0xFC01) == "vendor-specific command 0xFC01")
        #expect(hciCommandName(0x2099) == "command 0x2099")
    }

    @Test func companies() {
        #expect(companyName(0x000A).hasPrefix("Cambridge Silicon Radio"))
        #expect(companyName(0x0002) == "Intel (0x0002)")
        #expect(companyName(0x000F) == "Broadcom (0x000F)")
        #expect(companyName(0x005D) == "Realtek Semiconductor (0x005D)")
        #expect(companyName(0x001D) == "Qualcomm (0x001D)")
        #expect(companyName(0x0046) == "MediaTek (0x0046)")
        #expect(companyName(0x000D) == "Texas Instruments (0x000D)")
        #expect(companyName(0x0059) == "Nordic Semiconductor (0x0059)")
        #expect(companyName(0x004C) == "Apple (0x004C)")
        #expect(companyName(0x00E0) == "Google (0x00E0)")
        #expect(companyName(0x0048) == "Marvell (0x0048)")
        #expect(companyName(0xFFFF) == "none (test/unassigned) (0xFFFF)")
        #expect(companyName(0x1234) == "company 0x1234")
    }

    @Test func leFeatureBits() {
        // Core Vol 6 Part B §4.6: bit 14 is CSA #2, bit 16 the minimum used channels procedure.
        #expect(leFeatureList(1 << 14) == ["Channel Selection Algorithm #2"])
        #expect(leFeatureList(1 << 16) == ["Minimum Number of Used Channels Procedure"])
        #expect(leFeatureList(0b1_0000_0001) == ["LE Encryption", "LE 2M PHY"])
        // Unknown bits are not dropped; 33 and 34 are one feature.
        #expect(leFeatureList(1 << 55 | 1 << 33 | 1 << 34) == ["LE Power Control Request", "bit 55"])
        #expect(leFeatureList(0).isEmpty)
    }

    @Test func controllerInfoNamesTheManufacturerAndEveryFeature() {
        var info = ControllerInfo()
        info.manufacturer = 0xFFFF
        info.leFeatures = 1 << 0 | 1 << 14 | 1 << 60
        let text = controllerInfoBytes(info).string
        #expect(text.contains("Manufacturer:   none (test/unassigned) (0xFFFF)"))
        #expect(text.contains("LE Encryption"))
        #expect(text.contains("Channel Selection Algorithm #2"))
        #expect(text.contains("bit 60"))
        #expect(!text.contains("Manufacturer:   0xffff"))
    }
}

@Suite struct VersionTests {
    /// --version prints itcbDongleVersion; it must be the VERSION file's.
    @Test func versionConstantIsTheVersionFile() throws {
        let root = String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        let text = try #require(readSmallFile("/" + root + "/VERSION"))
        #expect(itcbDongleVersion == text)
        #expect(itcbDongleVersion == text)
    }
}

@Suite struct CommandLineCheckTests {
    @Test func utf8() {
        #expect(isValidUTF8(Array("Küche".utf8)))
        #expect(!isValidUTF8([0x4B, 0xFF]))
        #expect(!isValidUTF8([0xC3, 0x28]))
        #expect(invalidUTF8Argument([Array("--name".utf8), [0xFF]]) == "--name must be valid UTF-8 (its value has bytes that are not)")
        #expect(invalidUTF8Argument([Array("--name=".utf8) + [0xFF]]) == "--name must be valid UTF-8 (its value has bytes that are not)")
        #expect(invalidUTF8Argument([Array("--role".utf8), Array("central".utf8)]) == nil)
    }

    @Test func inapplicableOptionsAreRefused() {
        // The options as the parser hands them over (CommandLineTests parse).
        #expect(inapplicableOption(given: [(.role, "central"), (.name, "X")], role: .central,
                                   controllerInfo: false, listControllers: false)
                == "--name is a peripheral option: it does not apply with --role central")
        #expect(inapplicableOption(given: [(.role, "peripheral"), (.timeout, "3")], role: .peripheral,
                                   controllerInfo: false, listControllers: false)
                == "--timeout is a central option: it does not apply with --role peripheral")
        // A value that looks like an option is a value.
        #expect(inapplicableOption(given: [(.role, "peripheral"), (.name, "--json")], role: .peripheral,
                                   controllerInfo: false, listControllers: false) == nil)
        #expect(inapplicableOption(given: [(.listControllers, ""), (.timeout, "3")], role: nil,
                                   controllerInfo: false, listControllers: true)
                == "--timeout is a central option: it does not apply with --list-controllers")
        // --scan asks nothing; --peer and --timeout shape the scan.
        #expect(inapplicableOption(given: [(.role, "central"), (.scan, ""), (.question, "x?")], role: .central,
                                   controllerInfo: false, listControllers: false, scan: true)
                == "--question does not apply with --scan, which lists 8-Balls and asks nothing")
        #expect(inapplicableOption(given: [(.role, "central"), (.scan, ""), (.peer, "K"), (.timeout, "3")],
                                   role: .central, controllerInfo: false, listControllers: false, scan: true) == nil)
    }
}
