import Testing
@testable import BLEHost
import TestSupport

/// The raw configuration descriptor walk (USB 2.0 §9.6.3–9.6.6) that finds a
/// controller's endpoints, on real devices' layouts.
@Suite struct USBDescriptorTests {
    func endpoints(_ bytes: [UInt8]) -> Result<USBEndpoints, USBDescriptorError> {
        bytes.withRaw { raw in
            do throws(USBDescriptorError) { return .success(try USBConfigurationDescriptor.endpoints(raw)) }
            catch { return .failure(error) }
        }
    }

    static func configuration(interfaces: UInt8, _ body: [UInt8]) -> [UInt8] {
        let total = 9 + body.count
        return [9, 2, UInt8(total & 0xFF), UInt8(total >> 8), interfaces, 1, 0, 0xE0, 50] + body
    }
    static func interface(_ number: UInt8, alt: UInt8, endpoints: UInt8, cls: [UInt8] = [0xE0, 0x01, 0x01]) -> [UInt8] {
        [9, 4, number, alt, endpoints] + cls + [0]
    }
    static func endpoint(_ address: UInt8, _ attributes: UInt8, _ size: UInt16, _ interval: UInt8) -> [UInt8] {
        [7, 5, address, attributes, UInt8(size & 0xFF), UInt8(size >> 8), interval]
    }
    /// Interface 1 of a Bluetooth controller: SCO over isochronous 0x03/0x83, one alternate setting per size.
    static func scoInterface(_ sizes: [UInt16]) -> [UInt8] {
        sizes.enumerated().flatMap { alt, size in
            interface(1, alt: UInt8(alt), endpoints: 2) + endpoint(0x03, 0x01, size, 1) + endpoint(0x83, 0x01, size, 1)
        }
    }

    /// The emulated dongle of Tests/USBFixture (gadget_dongle.py), full speed, as it answers GET_DESCRIPTOR.
    static let fixtureDongle = hex("09 02 27 00 01 01 00 c0 32 09 04 00 00 03 e0 01 01 00 07 05 81 03 10 00 01 07 05 82 02 40 00 00 07 05 02 02 40 00 00")
    /// A CSR8510 A10 (0a12:0001, lsusb -v): interface 0 with 0x81 interrupt 16, 0x02 bulk OUT 64,
    /// 0x82 bulk IN 64; interface 1 with six alternate settings of isochronous SCO endpoints (177 bytes).
    static let csr8510 = configuration(interfaces: 2,
        interface(0, alt: 0, endpoints: 3) + endpoint(0x81, 0x03, 16, 1) + endpoint(0x02, 0x02, 64, 1) + endpoint(0x82, 0x02, 64, 1)
        + scoInterface([0, 9, 17, 25, 33, 49]))
    /// An Intel AX210 (8087:0032): interface 0 with 0x81 interrupt 64, 0x02 bulk OUT 64, 0x82 bulk IN 64;
    /// interface 1 with seven SCO alternate settings (up to 63 bytes).
    static let ax210 = configuration(interfaces: 2,
        interface(0, alt: 0, endpoints: 3) + endpoint(0x81, 0x03, 64, 1) + endpoint(0x02, 0x02, 64, 0) + endpoint(0x82, 0x02, 64, 0)
        + scoInterface([0, 9, 17, 25, 33, 49, 63]))

    @Test func realLayouts() throws {
        let fixture = try endpoints(Self.fixtureDongle).get()
        #expect(fixture.event == 0x81 && fixture.aclIn == 0x82 && fixture.aclOut == 0x02)
        #expect(fixture.eventMaxPacket == 16 && fixture.aclInMaxPacket == 64 && fixture.aclOutMaxPacket == 64)
        #expect(Self.csr8510.count == 177)
        let csr = try endpoints(Self.csr8510).get()
        #expect(csr.event == 0x81 && csr.aclIn == 0x82 && csr.aclOut == 0x02 && csr.eventMaxPacket == 16)
        let intel = try endpoints(Self.ax210).get()
        #expect(intel.event == 0x81 && intel.eventMaxPacket == 64 && intel.aclInMaxPacket == 64)
        // Bytes read past wTotalLength (a larger buffer) are not descriptors.
        #expect((try? endpoints(Self.csr8510 + [0, 0, 0]).get()) == csr)
    }

    /// The emulated dongle's device descriptor (0a12:0001, class E0/01/01, bcdDevice 88.91, one configuration).
    static let fixtureDevice = hex("12 01 00 02 e0 01 01 40 12 0a 01 00 91 88 01 02 03 01")

    @Test func linuxCopyStartsWithTheDeviceDescriptor() throws {
        func cached(_ bytes: [UInt8]) -> Result<USBEndpoints, USBDescriptorError> {
            bytes.withRaw { raw in
                do throws(USBDescriptorError) { return .success(try USBConfigurationDescriptor.endpoints(deviceDescriptors: raw)) }
                catch { return .failure(error) }
            }
        }
        // sysfs `descriptors`: the device descriptor, then the configuration.
        let fixture = try endpoints(Self.fixtureDongle).get()
        #expect((try? cached(Self.fixtureDevice + Self.fixtureDongle).get()) == fixture)
        #expect((try? cached(Self.fixtureDevice + Self.csr8510).get()) == (try? endpoints(Self.csr8510).get()))
        // A configuration alone is walked as it is; the device descriptor alone is no configuration.
        #expect((try? cached(Self.fixtureDongle).get()) == fixture)
        #expect(cached(Self.fixtureDevice) == .failure(.notAConfiguration))
        #expect(cached([]) == .failure(.notAConfiguration))
        // Cut inside the configuration: its wTotalLength says so.
        #expect(cached(Self.fixtureDevice + Self.fixtureDongle.dropLast(7)) == .failure(.truncated(totalLength: 39, read: 32)))
    }

    @Test func byTypeAndDirectionOfInterfaceZeroAltZeroOnly() throws {
        // Unusual addresses (as FunctionFS gadgets pick them), high-speed sizes, a class
        // descriptor in between; interface 0 alt 1 and interface 1 endpoints are not the controller's.
        let bytes = Self.configuration(interfaces: 2,
            Self.endpoint(0x8F, 0x03, 8, 1)  // before any interface: belongs to none
            + Self.interface(0, alt: 0, endpoints: 3) + [5, 0x24, 1, 2, 3]
            + Self.endpoint(0x02, 0x02, 512, 0) + Self.endpoint(0x86, 0x02, 512, 0) + Self.endpoint(0x83, 0x03, 16, 4)
            + Self.interface(0, alt: 1, endpoints: 1) + Self.endpoint(0x84, 0x03, 64, 1)
            + Self.interface(1, alt: 0, endpoints: 1) + Self.endpoint(0x85, 0x02, 64, 0))
        let e = try endpoints(bytes).get()
        #expect(e.event == 0x83 && e.aclIn == 0x86 && e.aclOut == 0x02)
        #expect(e.eventMaxPacket == 16 && e.aclInMaxPacket == 512 && e.aclOutMaxPacket == 512)
    }

    @Test func reasons() {
        #expect(endpoints([]) == .failure(.notAConfiguration))
        #expect(endpoints(hex("12 01 00 02 e0 01 01 40 12 0a 01 00")) == .failure(.notAConfiguration))  // a device descriptor
        // Cut anywhere: never a crash, always a reason.
        for n in 0..<Self.csr8510.count {
            guard case .failure = endpoints(Array(Self.csr8510.prefix(n))) else {
                Issue.record("a cut at \(n) gave endpoints")
                continue
            }
        }
        #expect(endpoints(Array(Self.ax210.prefix(100))) == .failure(.truncated(totalLength: Self.ax210.count, read: 100)))
        // bLength 0 would loop forever; past wTotalLength would read beyond it.
        var zero = Self.fixtureDongle
        zero[18] = 0
        #expect(endpoints(zero) == .failure(.badDescriptor(offset: 18)))
        var long = Self.fixtureDongle
        long[32] = 9
        #expect(endpoints(long) == .failure(.badDescriptor(offset: 32)))
        var short = Self.fixtureDongle
        short[18] = 4
        #expect(endpoints(short) == .failure(.shortDescriptor(offset: 18)))
        // No bulk OUT; isochronous instead of interrupt; no interface 0.
        #expect(endpoints(Self.configuration(interfaces: 1, Self.interface(0, alt: 0, endpoints: 2)
            + Self.endpoint(0x81, 0x03, 16, 1) + Self.endpoint(0x82, 0x02, 64, 0)))
            == .failure(.missingEndpoints(interruptIn: true, bulkIn: true, bulkOut: false)))
        #expect(endpoints(Self.configuration(interfaces: 1, Self.interface(0, alt: 0, endpoints: 3)
            + Self.endpoint(0x81, 0x01, 16, 1) + Self.endpoint(0x82, 0x02, 64, 0) + Self.endpoint(0x02, 0x02, 64, 0)))
            == .failure(.missingEndpoints(interruptIn: false, bulkIn: true, bulkOut: true)))
        #expect(endpoints(Self.configuration(interfaces: 1, Self.scoInterface([0, 9]))) == .failure(.noInterfaceZero))
    }
}
