// Compiled to LLVM IR by scripts/firmware.sh build (never linked): each function
// folds to `ret i32 N`, the size of the firmware's state (the driver: host, 8-Ball,
// de-framer, outgoing packet) as Swift lays it out, so its static
// home in .bss is exactly that size.
import BLEHost
import EightBall

@_cdecl("fw_layout_driver") public func driverSize() -> Int { MemoryLayout<HostLoop<EightBallPeripheral, NoSetup>>.size }
