/// What a Client Characteristic Configuration value written by a peer means
/// (Core Vol 3 Part G §3.3.3.3): bit 0 notifications, bit 1 indications. BlueZ
/// writes 0x0002 to Service Changed, which is neither "unsubscribed" nor a
/// notification subscription.
func cccdDescription(_ value: UInt16) -> String {
    switch value & 0x0003 {
    case 0x0001: "subscribed to notifications"
    case 0x0002: "subscribed to indications"
    case 0x0003: "subscribed to notifications and indications"
    default: "unsubscribed (notifications and indications off)"
    }
}
