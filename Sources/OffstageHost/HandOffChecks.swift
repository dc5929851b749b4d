import OffstageCore
import OffstageProtocol

/// The checks of a hand-off call's descriptor, as every shell refuses one: `io.offstage.Modes.InvalidArgument` naming
/// what the descriptor is and what to hand off instead.
public enum HandOffChecks {
    /// The VoIP socket `fd`, when it is one a shell can watch (``HandedOffSocketCheck``).
    public static func socket(_ fd: Int32) throws(VarlinkError) -> HandedOffSocket {
        do {
            return try HandedOffSocketCheck.check(fd)
        } catch {
            throw invalid("\(error)", fix: "hand off the connected socket to your signalling server")
        }
    }

    /// What the accessory session `fd` is — `character-device`, `fifo` or `socket` — when a shell can watch it
    /// (``AccessorySessionCheck``).
    public static func accessorySession(_ fd: Int32) throws(VarlinkError) -> String {
        do throws(AccessorySessionError) {
            return try AccessorySessionCheck.check(fd)
        } catch {
            throw invalid(error.description, fix: AccessorySessionCheck.fix)
        }
    }

    /// The hand-off's refusal: `io.offstage.Modes.InvalidArgument` with `message` and `fix`.
    public static func invalid(_ message: String, fix: String) -> VarlinkError {
        CoreError(.invalidArgument, message, fix: fix).varlink(in: ModesInterface.name)
    }
}
