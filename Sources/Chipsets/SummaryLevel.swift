import BLEHost

public enum SummaryLevel: Equatable { case none, info, debug }
