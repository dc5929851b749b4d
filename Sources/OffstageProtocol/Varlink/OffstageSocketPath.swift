#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the daemon's Varlink socket is, for the daemon (to bind) and for the SDK and the command line (to connect).
public enum OffstageSocketPath {
    /// The environment variable that names the socket, below `--socket` and above every default.
    public static let environmentVariable = "OFFSTAGE_SOCKET"
    /// The socket's file name inside whichever directory is chosen.
    public static let fileName = "offstaged.sock"

    /// The socket path, from the first of these that is set and not empty:
    ///
    /// 1. `explicit` (the `--socket` option);
    /// 2. `$OFFSTAGE_SOCKET`;
    /// 3. `$XDG_RUNTIME_DIR/offstage/offstaged.sock`, when `XDG_RUNTIME_DIR` is an absolute path (the XDG base
    ///    directory specification says to ignore a relative one): the per-user runtime directory, private to the
    ///    user and cleaned at logout;
    /// 4. `<stateDirectory>/offstaged.sock`;
    /// 5. `/tmp/offstage-<uid>/offstaged.sock`.
    ///
    /// - Parameters:
    ///   - explicit: The path given on the command line, if any.
    ///   - environment: The process environment (`ProcessInfo.processInfo.environment`).
    ///   - stateDirectory: The daemon's state directory, if one is configured.
    ///   - userID: The user the path is for; the real user id of this process unless given.
    public static func resolve(
        explicit: String?,
        environment: [String: String],
        stateDirectory: String?,
        userID: UInt32 = UInt32(getuid())
    ) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty { return fromEnvironment }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return join(join(runtime, "offstage"), fileName)
        }
        if let stateDirectory, !stateDirectory.isEmpty { return join(stateDirectory, fileName) }
        return join("/tmp/offstage-\(userID)", fileName)
    }

    /// The daemon's default state folder, from the first of these that is set and not empty:
    ///
    /// 1. `$OFFSTAGE_STATE_DIR`;
    /// 2. `$XDG_STATE_HOME/offstage`, when `XDG_STATE_HOME` is an absolute path;
    /// 3. `$HOME/.local/state/offstage` (the XDG default for `XDG_STATE_HOME`);
    /// 4. `/tmp/offstage-<uid>/state`, for a user without a home.
    ///
    /// `--state-dir` on the daemon's command line comes before all of these.
    public static func defaultStateDirectory(
        environment: [String: String],
        userID: UInt32 = UInt32(getuid())
    ) -> String {
        if let explicit = environment["OFFSTAGE_STATE_DIR"], !explicit.isEmpty { return explicit }
        if let stateHome = environment["XDG_STATE_HOME"], stateHome.hasPrefix("/") {
            return join(stateHome, "offstage")
        }
        if let home = environment["HOME"], !home.isEmpty { return join(home, ".local/state/offstage") }
        return join("/tmp/offstage-\(userID)", "state")
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
