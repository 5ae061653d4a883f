// Compiled to LLVM IR by scripts/firmware.sh build (never linked): each function
// folds to `ret i32 N`, the size of one piece of the firmware's state as Swift
// lays it out, so the board's static homes in .bss are exactly that size.
import BLEHost
import EightBall

@_cdecl("fw_layout_host") public func hostSize() -> Int { MemoryLayout<Host>.size }
@_cdecl("fw_layout_logic") public func logicSize() -> Int { MemoryLayout<EightBallPeripheral>.size }
@_cdecl("fw_layout_deframer") public func deframerSize() -> Int { MemoryLayout<H4Deframer>.size }
@_cdecl("fw_layout_packet") public func packetSize() -> Int { MemoryLayout<HCIPacket>.size }
