// Names for numbers the controller and the core report, so that log lines and
// --controller-info say "LE Set Scan Parameters" rather than 0x200b:
//  - HCI command opcodes (Core Vol 4 Part E §7; OGF << 10 | OCF): every opcode
//    the core sends (HCIOpcode) and the usual neighbours;
//  - Bluetooth SIG company identifiers (Assigned Numbers §7) of common
//    controller vendors, for the manufacturer in Read Local Version Information;
//  - LE feature bits (Core Vol 6 Part B §4.6), unknown ones as "bit N".

/// "LE Set Scan Parameters (0x200B)"; unknown commands "command 0x2099",
/// vendor-specific ones (OGF 0x3F) "vendor-specific command 0xFC01".
func hciCommandName(_ opcode: UInt16) -> String {
    let code = "0x" + hex4(opcode).uppercasedASCII()
    if let name = hciCommandNames(opcode) { return "\(name) (\(code))" }
    if opcode >> 10 == 0x3F { return "vendor-specific command \(code)" }
    return "command \(code)"
}

func hciCommandNames(_ key: UInt16) -> String? {
    switch key {
    // Link Control (OGF 0x01)
    case 0x0401: "Inquiry"
    case 0x0402: "Inquiry Cancel"
    case 0x0405: "Create Connection"
    case 0x0406: "Disconnect"
    case 0x0408: "Create Connection Cancel"
    case 0x0409: "Accept Connection Request"
    case 0x040A: "Reject Connection Request"
    case 0x041D: "Read Remote Version Information"
    // Controller & Baseband (OGF 0x03)
    case 0x0C01: "Set Event Mask"
    case 0x0C03: "Reset"
    case 0x0C05: "Set Event Filter"
    case 0x0C13: "Write Local Name"
    case 0x0C14: "Read Local Name"
    case 0x0C1A: "Write Scan Enable"
    case 0x0C2D: "Read Transmit Power Level"
    case 0x0C31: "Set Controller To Host Flow Control"
    case 0x0C33: "Host Buffer Size"
    case 0x0C35: "Host Number Of Completed Packets"
    case 0x0C63: "Set Event Mask Page 2"
    case 0x0C6D: "Write LE Host Support"
    case 0x0C7B: "Read Authenticated Payload Timeout"
    case 0x0C7C: "Write Authenticated Payload Timeout"
    // Informational Parameters (OGF 0x04)
    case 0x1001: "Read Local Version Information"
    case 0x1002: "Read Local Supported Commands"
    case 0x1003: "Read Local Supported Features"
    case 0x1004: "Read Local Extended Features"
    case 0x1005: "Read Buffer Size"
    case 0x1009: "Read BD_ADDR"
    // Status Parameters (OGF 0x05)
    case 0x1405: "Read RSSI"
    // LE Controller (OGF 0x08)
    case 0x2001: "LE Set Event Mask"
    case 0x2002: "LE Read Buffer Size"
    case 0x2003: "LE Read Local Supported Features"
    case 0x2005: "LE Set Random Address"
    case 0x2006: "LE Set Advertising Parameters"
    case 0x2007: "LE Read Advertising Physical Channel Tx Power"
    case 0x2008: "LE Set Advertising Data"
    case 0x2009: "LE Set Scan Response Data"
    case 0x200A: "LE Set Advertising Enable"
    case 0x200B: "LE Set Scan Parameters"
    case 0x200C: "LE Set Scan Enable"
    case 0x200D: "LE Create Connection"
    case 0x200E: "LE Create Connection Cancel"
    case 0x200F: "LE Read Filter Accept List Size"
    case 0x2010: "LE Clear Filter Accept List"
    case 0x2011: "LE Add Device To Filter Accept List"
    case 0x2012: "LE Remove Device From Filter Accept List"
    case 0x2013: "LE Connection Update"
    case 0x2014: "LE Set Host Channel Classification"
    case 0x2015: "LE Read Channel Map"
    case 0x2016: "LE Read Remote Features"
    case 0x2017: "LE Encrypt"
    case 0x2018: "LE Rand"
    case 0x2019: "LE Enable Encryption"
    case 0x201A: "LE Long Term Key Request Reply"
    case 0x201B: "LE Long Term Key Request Negative Reply"
    case 0x201C: "LE Read Supported States"
    case 0x201D: "LE Receiver Test"
    case 0x201E: "LE Transmitter Test"
    case 0x201F: "LE Test End"
    case 0x2020: "LE Remote Connection Parameter Request Reply"
    case 0x2021: "LE Remote Connection Parameter Request Negative Reply"
    case 0x2022: "LE Set Data Length"
    case 0x2023: "LE Read Suggested Default Data Length"
    case 0x2024: "LE Write Suggested Default Data Length"
    case 0x2025: "LE Read Local P-256 Public Key"
    case 0x2026: "LE Generate DHKey"
    case 0x2027: "LE Add Device To Resolving List"
    case 0x2028: "LE Remove Device From Resolving List"
    case 0x2029: "LE Clear Resolving List"
    case 0x202A: "LE Read Resolving List Size"
    case 0x202B: "LE Read Peer Resolvable Address"
    case 0x202C: "LE Read Local Resolvable Address"
    case 0x202D: "LE Set Address Resolution Enable"
    case 0x202E: "LE Set Resolvable Private Address Timeout"
    case 0x202F: "LE Read Maximum Data Length"
    case 0x2030: "LE Read PHY"
    case 0x2031: "LE Set Default PHY"
    case 0x2032: "LE Set PHY"
    case 0x2035: "LE Set Advertising Set Random Address"
    case 0x2036: "LE Set Extended Advertising Parameters"
    case 0x2037: "LE Set Extended Advertising Data"
    case 0x2038: "LE Set Extended Scan Response Data"
    case 0x2039: "LE Set Extended Advertising Enable"
    case 0x203A: "LE Read Maximum Advertising Data Length"
    case 0x203B: "LE Read Number of Supported Advertising Sets"
    case 0x203C: "LE Remove Advertising Set"
    case 0x203D: "LE Clear Advertising Sets"
    case 0x2041: "LE Set Extended Scan Parameters"
    case 0x2042: "LE Set Extended Scan Enable"
    case 0x2043: "LE Extended Create Connection"
    case 0x204B: "LE Read Transmit Power"
    case 0x204E: "LE Set Privacy Mode"
    default: nil
    }
}

/// "Cambridge Silicon Radio (0x000A)"; unknown identifiers "company 0x1234".
func companyName(_ identifier: UInt16) -> String {
    let code = "0x" + hex4(identifier).uppercasedASCII()
    if let name = companyNames(identifier) { return "\(name) (\(code))" }
    return "company \(code)"
}

/// Bluetooth SIG company identifiers of controller vendors (Assigned Numbers).
func companyNames(_ key: UInt16) -> String? {
    switch key {
    case 0x0000: "Ericsson"
    case 0x0001: "Nokia"
    case 0x0002: "Intel"
    case 0x0006: "Microsoft"
    case 0x0009: "Infineon Technologies"
    case 0x000A: "Cambridge Silicon Radio (now Qualcomm Technologies International)"
    case 0x000D: "Texas Instruments"
    case 0x000F: "Broadcom"
    case 0x001D: "Qualcomm"
    case 0x0025: "NXP (formerly Philips Semiconductors)"
    case 0x0030: "STMicroelectronics"
    case 0x0045: "Atheros Communications"
    case 0x0046: "MediaTek"
    case 0x0048: "Marvell"
    case 0x004C: "Apple"
    case 0x0059: "Nordic Semiconductor"
    case 0x005D: "Realtek Semiconductor"
    case 0x0075: "Samsung Electronics"
    case 0x00D2: "Dialog Semiconductor"
    case 0x00E0: "Google"
    case 0x0131: "Cypress Semiconductor"
    case 0x02E5: "Espressif Systems"
    case 0x05F1: "The Linux Foundation (Zephyr)"
    case 0xFFFF: "none (test/unassigned)"
    default: nil
    }
}

/// LE feature bit names (Core Vol 6 Part B §4.6, Table 4.5), bit number → name.
func leFeatureNames(_ key: Int) -> String? {
    switch key {
    case 0: "LE Encryption"
    case 1: "Connection Parameters Request Procedure"
    case 2: "Extended Reject Indication"
    case 3: "Peripheral-initiated Features Exchange"
    case 4: "LE Ping"
    case 5: "LE Data Packet Length Extension"
    case 6: "LL Privacy"
    case 7: "Extended Scanner Filter Policies"
    case 8: "LE 2M PHY"
    case 9: "Stable Modulation Index - Transmitter"
    case 10: "Stable Modulation Index - Receiver"
    case 11: "LE Coded PHY"
    case 12: "LE Extended Advertising"
    case 13: "LE Periodic Advertising"
    case 14: "Channel Selection Algorithm #2"
    case 15: "LE Power Class 1"
    case 16: "Minimum Number of Used Channels Procedure"
    case 17: "Connection CTE Request"
    case 18: "Connection CTE Response"
    case 19: "Connectionless CTE Transmitter"
    case 20: "Connectionless CTE Receiver"
    case 21: "Antenna Switching During CTE Transmission (AoD)"
    case 22: "Antenna Switching During CTE Reception (AoA)"
    case 23: "Receiving Constant Tone Extensions"
    case 24: "Periodic Advertising Sync Transfer - Sender"
    case 25: "Periodic Advertising Sync Transfer - Recipient"
    case 26: "Sleep Clock Accuracy Updates"
    case 27: "Remote Public Key Validation"
    case 28: "Connected Isochronous Stream - Central"
    case 29: "Connected Isochronous Stream - Peripheral"
    case 30: "Isochronous Broadcaster"
    case 31: "Synchronized Receiver"
    case 32: "Connected Isochronous Stream (Host Support)"
    case 33: "LE Power Control Request"
    case 34: "LE Power Control Request"
    case 35: "LE Path Loss Monitoring"
    case 36: "Periodic Advertising ADI support"
    case 37: "Connection Subrating"
    case 38: "Connection Subrating (Host Support)"
    case 39: "Channel Classification"
    case 40: "Advertising Coding Selection"
    case 41: "Advertising Coding Selection (Host Support)"
    case 42: "Decision-Based Advertising Filtering"
    case 43: "Periodic Advertising with Responses - Advertiser"
    case 44: "Periodic Advertising with Responses - Scanner"
    case 45: "Unsegmented Framed Mode"
    case 46: "Channel Sounding"
    case 47: "Channel Sounding (Host Support)"
    case 48: "Channel Sounding Tone Quality Indication"
    case 63: "LL Extended Feature Set"
    default: nil
    }
}

/// Every bit set in the 64-bit LE feature mask, by name; unknown bits as
/// "bit N". Bits 33 and 34 are one feature (LE Power Control Request): named once.
func leFeatureList(_ mask: UInt64) -> [String] {
    var names: [String] = []
    for bit in 0..<64 where mask & (1 << UInt64(bit)) != 0 {
        let name = leFeatureNames(bit) ?? "bit \(bit)"
        if !names.containsBytes(name) { names.append(name) }
    }
    return names
}
