/// Every fixed capacity in one place: together they are the program's static
/// memory. Value generics take literals only, so each capacity is a type alias
/// and the counts are read back from the types. One name per capacity, for
/// what it holds; a `…Store` is the same bytes kept in place (`ByteStore`,
/// read where they lie), the plain name a `FixedBytes` value. Sizes a protocol
/// fixes for one local value (a 2-byte CCCD value, a 16-byte UUID, a 4-byte
/// header) are written where the value is built.
public enum Capacity {
    // The firmware build (-D ITCB_FIRMWARE, scripts/firmware.sh) is a one-link
    // peripheral with rings sized for one central and ATT MTU 247: its static
    // RAM fits 24 KB. Linux: 8 links and ATT MTU 517.
    #if ITCB_FIRMWARE
    /// LE links at once: the connection table and the 8-Ball's per-central state.
    public typealias PerLink<Element: ~Copyable> = InlineArray<1, Element>
    /// HostEvents waiting for the platform between two drains.
    public typealias EventRing = FixedQueue<8, HostEvent>
    /// Advertising reports waiting beside their events (the firmware does not scan).
    public typealias ReportRing = FixedQueue<1, AdvertisingReport>
    /// HCI commands queued behind the outstanding one (advertising set-up queues 4).
    public typealias CommandRing = FixedQueue<6, HCIPacket>
    /// ACL that overtook its LE Connection Complete.
    public typealias EarlyACLRing = FixedQueue<1, HCIPacket>
    /// L2CAP PDUs queued for the controller, all links together.
    public typealias TransmitSlots<Element: ~Copyable> = InlineArray<6, Element>
    /// The ATT MTU our server offers and our client asks for: the largest that
    /// one 251-byte LE data PDU carries (251 - the 4-byte L2CAP header), which
    /// keeps every PDU buffer below within the MCU's RAM budget.
    public static let attMTU: UInt16 = 247
    /// One outgoing ATT PDU (at most `attMTU` bytes and a little: signaling and
    /// SMP payloads are shorter), where it is built and waits to be sent (the
    /// transmit queue's slots, a link's owed answer).
    public typealias ATTPDU = FixedBytes<256>
    public typealias ATTPDUStore = ByteStore<256>
    /// One L2CAP PDU gathered from ACL fragments: the 4-byte header and the
    /// largest PDU we accept (`attMTU` + headroom).
    public typealias L2CAPPDU = FixedBytes<260>
    #else
    public typealias PerLink<Element: ~Copyable> = InlineArray<8, Element>
    public typealias EventRing = FixedQueue<32, HostEvent>
    public typealias ReportRing = FixedQueue<16, AdvertisingReport>
    public typealias CommandRing = FixedQueue<12, HCIPacket>
    public typealias EarlyACLRing = FixedQueue<2, HCIPacket>
    public typealias TransmitSlots<Element: ~Copyable> = InlineArray<16, Element>
    /// Linux: the longest attribute value (512, Vol 3 Part F §3.2.9) in one
    /// Write Request (3 bytes of header), the MTU Android asks for: a 512-byte
    /// question is one write, not 3 Prepare Writes and an Execute Write. The
    /// PDU buffers follow it exactly (the L2CAP one with its 4-byte header),
    /// and a PDU this long is gathered from 27- or 251-byte ACL fragments.
    public static let attMTU: UInt16 = 517
    public typealias ATTPDU = FixedBytes<517>
    public typealias ATTPDUStore = ByteStore<517>
    public typealias L2CAPPDU = FixedBytes<521>
    #endif

    public static var links: Int { PerLink<UInt8>.count }
    public static var transmitPDUs: Int { TransmitSlots<UInt8>.count }

    /// Prepare Write entries per link, and the bytes they may hold together.
    public typealias PreparedWriteSlots<Element> = InlineArray<32, Element>
    public typealias PreparedWriteBytes = FixedBytes<640>

    /// Attributes of the static GATT database, their stored values, and CCCDs.
    public typealias AttributeSlots<Element> = InlineArray<24, Element>
    public typealias AttributeValuePool = FixedBytes<512>
    public typealias CCCDSlots<Element> = InlineArray<4, Element>

    /// One packet the host sends, H4 indicator first: a command (1 + 3 + 255
    /// parameter bytes) or an ACL fragment (1 + 4 + at most 251 bytes of an
    /// L2CAP PDU: the host caps the controller's ACL data length at 251 and
    /// fragments longer PDUs, `ACLTransmitQueue.nextFragment`), whatever the MTU.
    /// The transports' OUT transfers and waiting slots are sized from it.
    public typealias HCIPacket = FixedBytes<260>
    /// The packet the host's loop hands to the transport next.
    public typealias HCIPacketStore = ByteStore<260>
    /// An LE signalling answer a link is owed (the longest: LE Credit Based
    /// Connection Response, 14 bytes).
    public typealias SignalingAnswerStore = ByteStore<16>
    /// The same answer where it is built (one specialisation of the signalling handler).
    public typealias SignalingAnswer = FixedBytes<16>

    /// Largest HCI packet a transport gathers (H4 de-framer, USB endpoint
    /// reassembler): an ACL packet of 4 + 1024 bytes (events are 2 + 255),
    /// kept in place.
    public typealias ReceivedPacketStore = ByteStore<1028>

    /// Legacy advertising data or a scan response, and what is kept of one
    /// (a name from it, a report): at most 31 bytes (Vol 3 Part C §11).
    public typealias AdvertisingPayload = FixedBytes<31>
    /// Service UUIDs kept from one advertisement.
    public typealias AdvertisedServices<Element> = InlineArray<4, Element>

    /// Advertisers one scan remembers (merged by address; the least recently
    /// heard makes room).
    public typealias ScanEntries<Element> = InlineArray<16, Element>
    /// 8-Balls `--scan` has listed, by address: sized for a crowded hall (1 KB);
    /// when full the oldest is forgotten (and listed again if heard again).
    public typealias ReportedEightBalls<Element> = InlineArray<128, Element>

    /// What an application (the 8-Ball peripheral or central) has to tell its
    /// board between two drains.
    public typealias ApplicationEventRing<Element> = FixedQueue<16, Element>

    /// What the GATT client keeps of one discovery, per link.
    public typealias DiscoveredCharacteristicSlots = InlineArray<8, DiscoveredCharacteristic>
    public typealias DiscoveredDescriptorSlots = InlineArray<8, DiscoveredDescriptor>

    /// One question or any attribute value: ATT's maximum (Vol 3 Part F §3.2.9).
    public typealias AttributeValue = FixedBytes<512>
    /// A value the GATT client writes, kept while it is sent in parts.
    public typealias AttributeValueStore = ByteStore<512>

    /// A Device Name: at most 248 bytes of UTF-8 (Vol 3 Part C §12.1).
    public typealias DeviceName = FixedBytes<248>

    /// The USB transport's fixed transfer pool (Linux): IN transfers kept
    /// submitted per endpoint, OUT (bulk) and control transfers, and the
    /// packets that may wait for a free OUT transfer.
    public static let usbEventTransfers = 4
    public static let usbACLInTransfers = 4
    public static let usbOutTransfers = 8
    public static let usbControlTransfers = 4
    public typealias USBWaitingSlots<Element> = InlineArray<8, Element>

    /// One 8-Ball answer as it goes on the air: a slug or the longest phrase.
    public typealias AnswerValue = FixedBytes<32>

    // Chipsets (Sources/Chipsets): the vendor set-up's texts and file names.
    /// A chipset's text: a model, a label, a file name, a failure's detail
    /// (one size: one specialisation of each writer).
    public typealias ChipsetText = FixedBytes<128>
    /// The firmware files a set-up asks for, NUL-separated, in the order tried.
    public typealias FileAlternatives = FixedBytes<512>
    /// An Intel TLV firmware id as Linux keeps it (`fw_id[64]`, NUL-terminated:
    /// 63 bytes of text; Linux btintel.h `BTINTEL_FWID_MAXLEN`).
    public typealias IntelFirmwareIDText = FixedBytes<63>

    // The Linux board (Sources/ITCBDongle).
    /// One log line, built in place before its one write(2).
    public typealias LogLineStore = ByteStore<768>
    /// Repeated lines the rate limiter tracks at once (the least recent makes room).
    public typealias LineBursts<Element> = InlineArray<16, Element>
}
