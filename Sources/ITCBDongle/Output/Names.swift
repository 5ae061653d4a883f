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
    let code = upperHex4(opcode)
    if let name = hciCommandNames(opcode) { return built("\(name) (0x\(code))") }
    if opcode >> 10 == 0x3F { return built("vendor-specific command 0x\(code)") }
    return built("command 0x\(code)")
}

/// "0C03": four upper-case hex digits.
@inline(never)
func upperHex4(_ value: UInt16) -> String {
    let digits: StaticString = "0123456789ABCDEF"
    var text: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
    return withUnsafeMutableBytes(of: &text) { out in
        for i in 0 ..< 4 { out[i] = digits.utf8Start[Int((value >> UInt16(12 - 4 * i)) & 0xF)] }
        return String(repairingUTF8: UnsafeRawBufferPointer(out))
    }
}

/// The name for `key` in `table`, whose lines are "KEY NAME" with KEY in
/// upper-case hex: a name table as data, walked by this one loop, rather
/// than a switch of string literals compiled to code per case.
@inline(never)
func tableName(_ table: StaticString, _ key: UInt16) -> String? {
    let bytes = UnsafeRawBufferPointer(start: table.utf8Start, count: table.utf8CodeUnitCount)
    var index = 0
    while index < bytes.count {
        var value: UInt16 = 0
        while bytes[index] != 0x20 {
            let byte = bytes[index]
            value = value << 4 | UInt16(byte <= 0x39 ? byte - 0x30 : byte - 0x37)
            index += 1
        }
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != 0x0A { index += 1 }
        if value == key { return String(repairingUTF8: UnsafeRawBufferPointer(rebasing: bytes[start ..< index])) }
        index += 1
    }
    return nil
}

func hciCommandNames(_ key: UInt16) -> String? { tableName(hciCommandTable, key) }

/// OGF 0x01 Link Control, 0x03 Controller & Baseband, 0x04 Informational
/// Parameters, 0x05 Status Parameters, 0x08 LE Controller.
private let hciCommandTable: StaticString = """
0401 Inquiry
0402 Inquiry Cancel
0405 Create Connection
0406 Disconnect
0408 Create Connection Cancel
0409 Accept Connection Request
040A Reject Connection Request
041D Read Remote Version Information
0C01 Set Event Mask
0C03 Reset
0C05 Set Event Filter
0C13 Write Local Name
0C14 Read Local Name
0C1A Write Scan Enable
0C2D Read Transmit Power Level
0C31 Set Controller To Host Flow Control
0C33 Host Buffer Size
0C35 Host Number Of Completed Packets
0C63 Set Event Mask Page 2
0C6D Write LE Host Support
0C7B Read Authenticated Payload Timeout
0C7C Write Authenticated Payload Timeout
1001 Read Local Version Information
1002 Read Local Supported Commands
1003 Read Local Supported Features
1004 Read Local Extended Features
1005 Read Buffer Size
1009 Read BD_ADDR
1405 Read RSSI
2001 LE Set Event Mask
2002 LE Read Buffer Size
2003 LE Read Local Supported Features
2005 LE Set Random Address
2006 LE Set Advertising Parameters
2007 LE Read Advertising Physical Channel Tx Power
2008 LE Set Advertising Data
2009 LE Set Scan Response Data
200A LE Set Advertising Enable
200B LE Set Scan Parameters
200C LE Set Scan Enable
200D LE Create Connection
200E LE Create Connection Cancel
200F LE Read Filter Accept List Size
2010 LE Clear Filter Accept List
2011 LE Add Device To Filter Accept List
2012 LE Remove Device From Filter Accept List
2013 LE Connection Update
2014 LE Set Host Channel Classification
2015 LE Read Channel Map
2016 LE Read Remote Features
2017 LE Encrypt
2018 LE Rand
2019 LE Enable Encryption
201A LE Long Term Key Request Reply
201B LE Long Term Key Request Negative Reply
201C LE Read Supported States
201D LE Receiver Test
201E LE Transmitter Test
201F LE Test End
2020 LE Remote Connection Parameter Request Reply
2021 LE Remote Connection Parameter Request Negative Reply
2022 LE Set Data Length
2023 LE Read Suggested Default Data Length
2024 LE Write Suggested Default Data Length
2025 LE Read Local P-256 Public Key
2026 LE Generate DHKey
2027 LE Add Device To Resolving List
2028 LE Remove Device From Resolving List
2029 LE Clear Resolving List
202A LE Read Resolving List Size
202B LE Read Peer Resolvable Address
202C LE Read Local Resolvable Address
202D LE Set Address Resolution Enable
202E LE Set Resolvable Private Address Timeout
202F LE Read Maximum Data Length
2030 LE Read PHY
2031 LE Set Default PHY
2032 LE Set PHY
2035 LE Set Advertising Set Random Address
2036 LE Set Extended Advertising Parameters
2037 LE Set Extended Advertising Data
2038 LE Set Extended Scan Response Data
2039 LE Set Extended Advertising Enable
203A LE Read Maximum Advertising Data Length
203B LE Read Number of Supported Advertising Sets
203C LE Remove Advertising Set
203D LE Clear Advertising Sets
2041 LE Set Extended Scan Parameters
2042 LE Set Extended Scan Enable
2043 LE Extended Create Connection
204B LE Read Transmit Power
204E LE Set Privacy Mode
"""

/// "Cambridge Silicon Radio (0x000A)"; unknown identifiers "company 0x1234".
func companyName(_ identifier: UInt16) -> String {
    let code = upperHex4(identifier)
    if let name = companyNames(identifier) { return built("\(name) (0x\(code))") }
    return built("company 0x\(code)")
}

/// Bluetooth SIG company identifiers of controller vendors (Assigned Numbers).
func companyNames(_ key: UInt16) -> String? { tableName(companyTable, key) }

private let companyTable: StaticString = """
0000 Ericsson
0001 Nokia
0002 Intel
0006 Microsoft
0009 Infineon Technologies
000A Cambridge Silicon Radio (now Qualcomm Technologies International)
000D Texas Instruments
000F Broadcom
001D Qualcomm
0025 NXP (formerly Philips Semiconductors)
0030 STMicroelectronics
0045 Atheros Communications
0046 MediaTek
0048 Marvell
004C Apple
0059 Nordic Semiconductor
005D Realtek Semiconductor
0075 Samsung Electronics
00D2 Dialog Semiconductor
00E0 Google
0131 Cypress Semiconductor
02E5 Espressif Systems
05F1 The Linux Foundation (Zephyr)
FFFF none (test/unassigned)
"""

/// LE feature bit names (Core Vol 6 Part B §4.6, Table 4.5), bit number → name.
func leFeatureNames(_ key: Int) -> String? { tableName(leFeatureTable, UInt16(truncatingIfNeeded: key)) }

/// By bit number, in hex.
private let leFeatureTable: StaticString = """
00 LE Encryption
01 Connection Parameters Request Procedure
02 Extended Reject Indication
03 Peripheral-initiated Features Exchange
04 LE Ping
05 LE Data Packet Length Extension
06 LL Privacy
07 Extended Scanner Filter Policies
08 LE 2M PHY
09 Stable Modulation Index - Transmitter
0A Stable Modulation Index - Receiver
0B LE Coded PHY
0C LE Extended Advertising
0D LE Periodic Advertising
0E Channel Selection Algorithm #2
0F LE Power Class 1
10 Minimum Number of Used Channels Procedure
11 Connection CTE Request
12 Connection CTE Response
13 Connectionless CTE Transmitter
14 Connectionless CTE Receiver
15 Antenna Switching During CTE Transmission (AoD)
16 Antenna Switching During CTE Reception (AoA)
17 Receiving Constant Tone Extensions
18 Periodic Advertising Sync Transfer - Sender
19 Periodic Advertising Sync Transfer - Recipient
1A Sleep Clock Accuracy Updates
1B Remote Public Key Validation
1C Connected Isochronous Stream - Central
1D Connected Isochronous Stream - Peripheral
1E Isochronous Broadcaster
1F Synchronized Receiver
20 Connected Isochronous Stream (Host Support)
21 LE Power Control Request
22 LE Power Control Request
23 LE Path Loss Monitoring
24 Periodic Advertising ADI support
25 Connection Subrating
26 Connection Subrating (Host Support)
27 Channel Classification
28 Advertising Coding Selection
29 Advertising Coding Selection (Host Support)
2A Decision-Based Advertising Filtering
2B Periodic Advertising with Responses - Advertiser
2C Periodic Advertising with Responses - Scanner
2D Unsegmented Framed Mode
2E Channel Sounding
2F Channel Sounding (Host Support)
30 Channel Sounding Tone Quality Indication
3F LL Extended Feature Set
"""

/// Every bit set in the 64-bit LE feature mask, by name; unknown bits as
/// "bit N". Bits 33 and 34 are one feature (LE Power Control Request): named once.
func leFeatureList(_ mask: UInt64) -> [String] {
    var names: [String] = []
    for bit in 0..<64 where mask & (1 << UInt64(bit)) != 0 {
        let name = leFeatureNames(bit) ?? built("bit \(bit)")
        if !names.containsBytes(name) { names.append(name) }
    }
    return names
}
