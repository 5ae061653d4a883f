import CLinux
import BLEHost
import Chipsets

/// What --controller-info prints about the chipset set-up of this run, if one ran.
enum ChipsetReport {
    nonisolated(unsafe) static var line: String? = nil
}
