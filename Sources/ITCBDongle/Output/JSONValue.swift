import BLEHost
import EightBall
import CLinux

enum JSONValue {
    case string(String), int(Int), bool(Bool), null
    var encoded: String {
        @inline(never) get {
        switch self {
        case .string(let s): jsonString(s)
        case .int(let i): String(i)
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        }
        }
    }
}
