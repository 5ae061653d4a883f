import BLEHost

/// A USB dongle's chipset as `--list-controllers` shows it: its model and the
/// file a typical unit needs (under `info.directory`).
public struct USBModel {
    public var info: ChipsetInfo
    public var model = Capacity.ChipsetText()
    public var file = Capacity.ChipsetText()
}
