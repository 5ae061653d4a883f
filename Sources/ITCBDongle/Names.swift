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
    if let name = hciCommandNames[opcode] { return "\(name) (\(code))" }
    if opcode >> 10 == 0x3F { return "vendor-specific command \(code)" }
    return "command \(code)"
}

let hciCommandNames: [UInt16: String] = [
    // Link Control (OGF 0x01)
    0x0401: "Inquiry",
    0x0402: "Inquiry Cancel",
    0x0405: "Create Connection",
    0x0406: "Disconnect",
    0x0408: "Create Connection Cancel",
    0x0409: "Accept Connection Request",
    0x040A: "Reject Connection Request",
    0x041D: "Read Remote Version Information",
    // Controller & Baseband (OGF 0x03)
    0x0C01: "Set Event Mask",
    0x0C03: "Reset",
    0x0C05: "Set Event Filter",
    0x0C13: "Write Local Name",
    0x0C14: "Read Local Name",
    0x0C1A: "Write Scan Enable",
    0x0C2D: "Read Transmit Power Level",
    0x0C31: "Set Controller To Host Flow Control",
    0x0C33: "Host Buffer Size",
    0x0C35: "Host Number Of Completed Packets",
    0x0C63: "Set Event Mask Page 2",
    0x0C6D: "Write LE Host Support",
    0x0C7B: "Read Authenticated Payload Timeout",
    0x0C7C: "Write Authenticated Payload Timeout",
    // Informational Parameters (OGF 0x04)
    0x1001: "Read Local Version Information",
    0x1002: "Read Local Supported Commands",
    0x1003: "Read Local Supported Features",
    0x1004: "Read Local Extended Features",
    0x1005: "Read Buffer Size",
    0x1009: "Read BD_ADDR",
    // Status Parameters (OGF 0x05)
    0x1405: "Read RSSI",
    // LE Controller (OGF 0x08)
    0x2001: "LE Set Event Mask",
    0x2002: "LE Read Buffer Size",
    0x2003: "LE Read Local Supported Features",
    0x2005: "LE Set Random Address",
    0x2006: "LE Set Advertising Parameters",
    0x2007: "LE Read Advertising Physical Channel Tx Power",
    0x2008: "LE Set Advertising Data",
    0x2009: "LE Set Scan Response Data",
    0x200A: "LE Set Advertising Enable",
    0x200B: "LE Set Scan Parameters",
    0x200C: "LE Set Scan Enable",
    0x200D: "LE Create Connection",
    0x200E: "LE Create Connection Cancel",
    0x200F: "LE Read Filter Accept List Size",
    0x2010: "LE Clear Filter Accept List",
    0x2011: "LE Add Device To Filter Accept List",
    0x2012: "LE Remove Device From Filter Accept List",
    0x2013: "LE Connection Update",
    0x2014: "LE Set Host Channel Classification",
    0x2015: "LE Read Channel Map",
    0x2016: "LE Read Remote Features",
    0x2017: "LE Encrypt",
    0x2018: "LE Rand",
    0x2019: "LE Enable Encryption",
    0x201A: "LE Long Term Key Request Reply",
    0x201B: "LE Long Term Key Request Negative Reply",
    0x201C: "LE Read Supported States",
    0x201D: "LE Receiver Test",
    0x201E: "LE Transmitter Test",
    0x201F: "LE Test End",
    0x2020: "LE Remote Connection Parameter Request Reply",
    0x2021: "LE Remote Connection Parameter Request Negative Reply",
    0x2022: "LE Set Data Length",
    0x2023: "LE Read Suggested Default Data Length",
    0x2024: "LE Write Suggested Default Data Length",
    0x2025: "LE Read Local P-256 Public Key",
    0x2026: "LE Generate DHKey",
    0x2027: "LE Add Device To Resolving List",
    0x2028: "LE Remove Device From Resolving List",
    0x2029: "LE Clear Resolving List",
    0x202A: "LE Read Resolving List Size",
    0x202B: "LE Read Peer Resolvable Address",
    0x202C: "LE Read Local Resolvable Address",
    0x202D: "LE Set Address Resolution Enable",
    0x202E: "LE Set Resolvable Private Address Timeout",
    0x202F: "LE Read Maximum Data Length",
    0x2030: "LE Read PHY",
    0x2031: "LE Set Default PHY",
    0x2032: "LE Set PHY",
    0x2035: "LE Set Advertising Set Random Address",
    0x2036: "LE Set Extended Advertising Parameters",
    0x2037: "LE Set Extended Advertising Data",
    0x2038: "LE Set Extended Scan Response Data",
    0x2039: "LE Set Extended Advertising Enable",
    0x203A: "LE Read Maximum Advertising Data Length",
    0x203B: "LE Read Number of Supported Advertising Sets",
    0x203C: "LE Remove Advertising Set",
    0x203D: "LE Clear Advertising Sets",
    0x2041: "LE Set Extended Scan Parameters",
    0x2042: "LE Set Extended Scan Enable",
    0x2043: "LE Extended Create Connection",
    0x204B: "LE Read Transmit Power",
    0x204E: "LE Set Privacy Mode",
]

/// "Cambridge Silicon Radio (0x000A)"; unknown identifiers "company 0x1234".
func companyName(_ identifier: UInt16) -> String {
    let code = "0x" + hex4(identifier).uppercasedASCII()
    if let name = companyNames[identifier] { return "\(name) (\(code))" }
    return "company \(code)"
}

/// Bluetooth SIG company identifiers of controller vendors (Assigned Numbers).
let companyNames: [UInt16: String] = [
    0x0000: "Ericsson",
    0x0001: "Nokia",
    0x0002: "Intel",
    0x0006: "Microsoft",
    0x0009: "Infineon Technologies",
    0x000A: "Cambridge Silicon Radio (now Qualcomm Technologies International)",
    0x000D: "Texas Instruments",
    0x000F: "Broadcom",
    0x001D: "Qualcomm",
    0x0025: "NXP (formerly Philips Semiconductors)",
    0x0030: "STMicroelectronics",
    0x0045: "Atheros Communications",
    0x0046: "MediaTek",
    0x0048: "Marvell",
    0x004C: "Apple",
    0x0059: "Nordic Semiconductor",
    0x005D: "Realtek Semiconductor",
    0x0075: "Samsung Electronics",
    0x00D2: "Dialog Semiconductor",
    0x00E0: "Google",
    0x0131: "Cypress Semiconductor",
    0x02E5: "Espressif Systems",
    0x05F1: "The Linux Foundation (Zephyr)",
    0xFFFF: "none (test/unassigned)",
]

/// LE feature bit names (Core Vol 6 Part B §4.6, Table 4.5), bit number → name.
let leFeatureNames: [Int: String] = [
    0: "LE Encryption",
    1: "Connection Parameters Request Procedure",
    2: "Extended Reject Indication",
    3: "Peripheral-initiated Features Exchange",
    4: "LE Ping",
    5: "LE Data Packet Length Extension",
    6: "LL Privacy",
    7: "Extended Scanner Filter Policies",
    8: "LE 2M PHY",
    9: "Stable Modulation Index - Transmitter",
    10: "Stable Modulation Index - Receiver",
    11: "LE Coded PHY",
    12: "LE Extended Advertising",
    13: "LE Periodic Advertising",
    14: "Channel Selection Algorithm #2",
    15: "LE Power Class 1",
    16: "Minimum Number of Used Channels Procedure",
    17: "Connection CTE Request",
    18: "Connection CTE Response",
    19: "Connectionless CTE Transmitter",
    20: "Connectionless CTE Receiver",
    21: "Antenna Switching During CTE Transmission (AoD)",
    22: "Antenna Switching During CTE Reception (AoA)",
    23: "Receiving Constant Tone Extensions",
    24: "Periodic Advertising Sync Transfer - Sender",
    25: "Periodic Advertising Sync Transfer - Recipient",
    26: "Sleep Clock Accuracy Updates",
    27: "Remote Public Key Validation",
    28: "Connected Isochronous Stream - Central",
    29: "Connected Isochronous Stream - Peripheral",
    30: "Isochronous Broadcaster",
    31: "Synchronized Receiver",
    32: "Connected Isochronous Stream (Host Support)",
    33: "LE Power Control Request",
    34: "LE Power Control Request",
    35: "LE Path Loss Monitoring",
    36: "Periodic Advertising ADI support",
    37: "Connection Subrating",
    38: "Connection Subrating (Host Support)",
    39: "Channel Classification",
    40: "Advertising Coding Selection",
    41: "Advertising Coding Selection (Host Support)",
    42: "Decision-Based Advertising Filtering",
    43: "Periodic Advertising with Responses - Advertiser",
    44: "Periodic Advertising with Responses - Scanner",
    45: "Unsegmented Framed Mode",
    46: "Channel Sounding",
    47: "Channel Sounding (Host Support)",
    48: "Channel Sounding Tone Quality Indication",
    63: "LL Extended Feature Set",
]

/// Every bit set in the 64-bit LE feature mask, by name; unknown bits as
/// "bit N". Bits 33 and 34 are one feature (LE Power Control Request): named once.
func leFeatureList(_ mask: UInt64) -> [String] {
    var names: [String] = []
    for bit in 0..<64 where mask & (1 << UInt64(bit)) != 0 {
        let name = leFeatureNames[bit] ?? "bit \(bit)"
        if !names.contains(name) { names.append(name) }
    }
    return names
}
