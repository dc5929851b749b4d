/// Launches app processes and freezes, thaws, terminates and kills each app's whole process tree.
///
/// One implementation per `FreezerKind`, chosen at start-up by `ProcessControlFactory`. Every method that takes a
/// `leader` wants the pid `spawn` returned (or the adopted pid): the signal-based freezer finds the tree from it,
/// the cgroup freezers ignore it.
public protocol ProcessControl: Sendable {
    /// The mechanism in use.
    var kind: FreezerKind { get }

    /// The group for an app, creating its cgroup if needed; an existing one of that name is reused (after a
    /// daemon restart it still holds the app's processes).
    func makeGroup(forApp key: String) throws -> AppGroup

    /// Starts a process in the group, inside its cgroup before exec and as leader of its own process group.
    /// Returns its pid. Throws `ProcessControlError.cannotExecute` (nothing left running) when exec fails.
    func spawn(_ request: SpawnRequest, in group: AppGroup) throws -> Int32

    /// Moves a process started by someone else, and its descendants, into the group.
    func adopt(pid: Int32, into group: AppGroup) throws

    /// Freezes the whole tree and confirms it within the freeze timeout; on timeout or any error the tree is
    /// thawed again before the error is thrown, so a failed freeze never leaves a half-frozen app.
    func freeze(_ group: AppGroup, leader: Int32) throws

    /// Lets the tree run again.
    func thaw(_ group: AppGroup, leader: Int32) throws

    /// Sends SIGTERM to every process of the tree and thaws it so the signal can be handled.
    func terminate(_ group: AppGroup, leader: Int32) throws

    /// Sends SIGKILL to every process of the tree; works on a frozen tree.
    func kill(_ group: AppGroup, leader: Int32) throws

    /// Whether the whole tree is frozen.
    func isFrozen(_ group: AppGroup, leader: Int32) -> Bool

    /// The live processes of the tree.
    func members(of group: AppGroup, leader: Int32) -> [Int32]

    /// The key of the group that contains `pid`, if any group of this instance does.
    func appKey(owningPid pid: Int32) -> String?

    /// Removes the group's cgroup if it is empty; a group that still holds processes is left in place.
    func removeGroup(_ group: AppGroup)

    /// Removes every cgroup of this instance that is empty, then the instance's own directory.
    func removeAll()
}
