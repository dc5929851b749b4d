/// The container of one app's process tree: a cgroup directory, or (for `signalStop`) just the app's name.
public struct AppGroup: Sendable, Hashable, CustomStringConvertible {
    /// The app id the group was made for.
    public let key: String
    /// The freezer that made it.
    public let kind: FreezerKind
    /// The escaped directory name derived from the key.
    public let directoryName: String
    /// The absolute path of the cgroup directory; nil for `signalStop`.
    public let cgroupPath: String?

    /// Creates a group value; use `ProcessControl.makeGroup(forApp:)` to get one backed by a real cgroup.
    public init(key: String, kind: FreezerKind, directoryName: String, cgroupPath: String?) {
        self.key = key
        self.kind = kind
        self.directoryName = directoryName
        self.cgroupPath = cgroupPath
    }

    public var description: String { cgroupPath ?? "\(key) (\(kind.rawValue))" }
}
