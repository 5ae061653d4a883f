import BLEHost
import Chipsets
import EightBall
import CLinux

#if hasFeature(Embedded)
/// The Embedded build's entry point (no CommandLine there): C's main.
@_cdecl("main")
func embeddedMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    Main.run(argc: argc, argv: argv)
}
#else
@main
enum Entry {
    static func main() { exit(Main.run(argc: CommandLine.argc, argv: CommandLine.unsafeArgv)) }
}
#endif
