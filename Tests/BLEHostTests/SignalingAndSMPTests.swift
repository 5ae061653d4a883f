import Testing
@testable import BLEHost
import TestSupport

@Suite struct SignalingAndSMPTests {
    func signal(_ pdu: [UInt8], central: Bool) -> ([UInt8], L2CAPSignalNote) {
        var response = FixedBytes<64>()
        let note = pdu.withRaw { L2CAPSignaling.receive($0, isCentral: central, response: &response) }
        return (response.bytes, note)
    }

    @Test func unsupportedCommandIsRejected() {
        // Disconnection Request on LE: Command Reject, reason 0x0000 (Vol 3 Part A §4.1).
        #expect(signal(hex("06 07 04 00 40 00 40 00"), central: false).0 == hex("01 07 02 00 00 00"))
        #expect(signal(hex("ff 08 00 00"), central: true).0 == hex("01 08 02 00 00 00"))
    }

    @Test func identifierZeroIsDropped() {
        #expect(signal(hex("06 00 04 00 40 00 40 00"), central: false).0.isEmpty)
        #expect(signal(hex("06 01"), central: false).0.isEmpty)
    }

    @Test func lengthMismatchIsRejected() {
        #expect(signal(hex("12 03 08 00 06 00"), central: true).0 == hex("01 03 02 00 00 00"))
    }

    @Test func responsesAreNeverAnsweredNotEvenMalformedOnes() {
        // "A Command Reject shall not be sent in response to an identified
        // response packet" (Vol 3 Part A §4.1): malformed, unsolicited or not
        // for LE, a response is dropped without a word, on either side.
        let responses = [
            "13 05 04 00 00 00",  // Connection Parameter Update Response: length 4, 2 octets follow
            "13 05 03 00 00 00 00",  // its length agrees, but it is not the response's 2
            "13 05",  // cut short before its length
            "01 07 00 00",  // Command Reject without its reason
            "01 07 04 00 00 00",  // Command Reject, lengths disagree
            "15 09 0a 00 80 00",  // LE Credit Based Connection Response, cut short
            "15 09 0a 00 40 00 f7 00 f7 00 0a 00 00 00",  // well formed, to a request never sent
            "07 03 04 00 40 00 40 00",  // Disconnection Response
            "07 03 09 00 40 00",  // Disconnection Response, lengths disagree
            "18 04 02 00 00 00", "1a 04 02 00 00 00",  // Credit Based Connection / Reconfigure Response
            "03 02 00 00", "05 02 00 00", "09 02 00 00", "0b 02 00 00",  // BR/EDR responses
        ]
        for response in responses {
            for central in [false, true] {
                let (sent, note) = signal(hex(response), central: central)
                #expect(sent.isEmpty, "\(response) answered with \(sent)")
                #expect(note == .none, "\(response)")
            }
        }
        // Well formed, they tell what they say (the host checks the identifier).
        #expect(signal(hex("13 05 02 00 01 00"), central: false) == ([], .updateAnswered(identifier: 5, accepted: false)))
        #expect(signal(hex("13 05 02 00 00 00"), central: false) == ([], .updateAnswered(identifier: 5, accepted: true)))
        #expect(signal(hex("01 05 02 00 00 00"), central: false) == ([], .updateAnswered(identifier: 5, accepted: false)))
        // A request with the same faults is still rejected, and an unknown code too.
        #expect(signal(hex("12 05 04 00 00 00"), central: true).0 == hex("01 05 02 00 00 00"))
        #expect(signal(hex("14 05 0b 00 80 00"), central: false).0 == hex("01 05 02 00 00 00"))
        #expect(signal(hex("06 05 09 00 40 00"), central: false).0 == hex("01 05 02 00 00 00"))
        #expect(signal(hex("0c 05 00 00"), central: false).0 == hex("01 05 02 00 00 00"))
    }

    @Test func connectionParameterUpdate() {
        // As central: sane values accepted (result 0) and applied.
        let request = hex("12 05 08 00 18 00 28 00 00 00 f4 01")
        let (accepted, note) = signal(request, central: true)
        #expect(accepted == hex("13 05 02 00 00 00"))
        #expect(note == .updateConnection(ConnectionParameters(intervalMin: 24, intervalMax: 40, latency: 0, timeout: 500)))
        // Timeout too short for the interval: rejected (result 1).
        #expect(signal(hex("12 06 08 00 18 00 28 00 00 00 0a 00"), central: true) == (hex("13 06 02 00 01 00"), .none))
        // A peripheral never receives this request: Command Reject.
        #expect(signal(request, central: false).0 == hex("01 05 02 00 00 00"))
    }

    @Test func creditBasedConnectionIsRefused() {
        let (response, _) = signal(hex("14 09 0a 00 80 00 40 00 f7 00 f7 00 0a 00"), central: false)
        #expect(response == hex("15 09 0a 00 00 00 00 00 00 00 00 00 02 00"))
    }

    @Test func pairingIsNotSupported() {
        var response = FixedBytes<64>()
        // Pairing Request (Vol 3 Part H §3.5.1) → Pairing Failed, Pairing Not Supported.
        hex("01 03 00 01 10 07 07").withRaw { SMP.receive($0, response: &response) }
        #expect(response.bytes == hex("05 05"))
        hex("0b 01").withRaw { SMP.receive($0, response: &response) }  // Security Request
        #expect(response.bytes == hex("05 05"))
        hex("05 05").withRaw { SMP.receive($0, response: &response) }  // never answer a Pairing Failed
        #expect(response.isEmpty)
        [UInt8]().withRaw { SMP.receive($0, response: &response) }
        #expect(response.isEmpty)
    }
}
