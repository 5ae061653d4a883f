/// LE Supported Features bits (Core Vol 6 Part B §4.6) the host uses.
public enum LEFeature {
    public static let connectionParametersRequest: UInt64 = 1 &<< 1
    public static let dataPacketLengthExtension: UInt64 = 1 &<< 5
    public static let twoMegabitPHY: UInt64 = 1 &<< 8
}
