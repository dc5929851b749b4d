import COffstageSystem
import Glibc
import OffstageCore
import OffstageHost
import Synchronization

/// Watches whether the paths of registered accessories exist (SPEC MODE-4): a device node that devtmpfs creates
/// when the device arrives, a link udev makes for it (`/dev/serial/by-id/…`), a socket a Bluetooth bridge binds.
///
/// The kernel tells, nothing polls: one inotify descriptor watches the folder of each path — or, while that folder
/// does not exist yet (udev creates `/dev/serial/by-id` with the first serial device), its nearest existing ancestor.
/// Any event in a watched folder makes the watcher look again at the paths under it with `stat` (following links), so
/// the reported state always comes from the file system and a lost or merged event only makes it late. Each path's
/// state is reported once when it is watched and then on every change, on the watcher's thread.
final class AccessoryPathWatcher: Sendable {
    /// One registered accessory.
    struct Key: Hashable, Sendable {
        var app: AppID
        var name: String
    }

    /// Receives a path's state: true when it exists.
    typealias Handler = @Sendable (_ key: Key, _ present: Bool) -> Void

    private struct Watched {
        var path: String
        /// The folder watched for it.
        var folder: String
        /// The state last reported.
        var present: Bool
    }

    private struct State {
        var watched: [Key: Watched] = [:]
        /// The inotify watch of each folder in use.
        var watches: [String: Int32] = [:]
        /// The folder of each inotify watch.
        var folders: [Int32: String] = [:]
    }

    private let state = Mutex(State())
    private let handler: Handler
    private let inotify: Int32
    private let wake: Int32
    private let thread = Mutex<WatcherThread?>(nil)

    /// Starts the watcher's thread.
    init(handler: @escaping Handler) throws {
        self.handler = handler
        let inotify = offstage_inotify_open()
        guard inotify >= 0 else {
            throw ProcessControlError.systemCallFailed(call: "inotify_init1", target: "accessories", errno: errno)
        }
        let wake = offstage_eventfd()
        guard wake >= 0 else {
            close(inotify)
            throw ProcessControlError.systemCallFailed(call: "eventfd", target: "accessories", errno: errno)
        }
        (self.inotify, self.wake) = (inotify, wake)
        let started = try WatcherThread(name: "offstage-access") { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// Watches `path` for the accessory `key` (replacing a previous path) and reports its state now.
    func watch(_ key: Key, path: String) {
        let present = state.withLock { state -> Bool in
            state.watched[key] = Watched(path: path, folder: Self.watchableFolder(of: path), present: false)
            settle([key], &state)
            let present = AccessoryCalls.isPresent(path)
            state.watched[key]?.present = present
            return present
        }
        handler(key, present)
    }

    /// Stops watching the accessory `key`.
    func unwatch(_ key: Key) {
        state.withLock { state in
            state.watched[key] = nil
            refreshWatches(&state)
        }
    }

    /// The accessories watched now, with their paths (for the tests and `offstage accessory`).
    var watchedPaths: [Key: String] { state.withLock { $0.watched.mapValues(\.path) } }

    /// Stops the thread and closes the descriptors.
    func stop() {
        guard
            let running = thread.withLock({ thread -> WatcherThread? in
                defer { thread = nil }
                return thread
            })
        else { return }
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
        running.join()
        close(inotify)
        close(wake)
    }

    // MARK: The thread

    private func run() {
        var fds = [
            pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        var touched = [Int32](repeating: 0, count: 64)
        while true {
            guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { return }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            var overflowed: Int32 = 0
            let count = offstage_inotify_read_watches(inotify, &touched, Int32(touched.count), &overflowed)
            guard count >= 0 else { return }
            let changes = state.withLock { state -> [(Key, Bool)] in
                let folders = Set(touched.prefix(Int(count)).compactMap { state.folders[$0] })
                let keys = Array(state.watched.filter { overflowed != 0 || folders.contains($0.value.folder) }.keys)
                settle(keys, &state)
                // Looked at once the watches are in place: a change after this raises an event of its own.
                var changes: [(Key, Bool)] = []
                for key in keys {
                    guard let watched = state.watched[key] else { continue }
                    let present = AccessoryCalls.isPresent(watched.path)
                    if present != watched.present { changes.append((key, present)) }
                    state.watched[key]?.present = present
                }
                return changes
            }
            for (key, present) in changes { handler(key, present) }
        }
    }

    // MARK: Folders

    /// Moves each key's watch to the nearest folder of its path that exists now, again and again while that changes:
    /// a folder made between looking and watching it (udev makes `serial`, then `by-id`, then the link) raised its
    /// event before the watch was there, so only looking again after each new watch finds it.
    private func settle(_ keys: [Key], _ state: inout State) {
        for _ in 0..<Self.maximumSettleRounds {
            var moved = false
            for key in keys {
                guard let watched = state.watched[key] else { continue }
                let folder = Self.watchableFolder(of: watched.path)
                if folder != watched.folder {
                    state.watched[key]?.folder = folder
                    moved = true
                }
            }
            refreshWatches(&state)
            if !moved { return }
        }
    }

    /// Bounds the settling: a path is at most this deep below its first watched folder in practice, and a folder
    /// made and removed in a loop must not hold the thread.
    private static let maximumSettleRounds = 16

    /// Adds an inotify watch for every folder in use and removes the others. Adding a watch again for a folder is
    /// harmless (the kernel returns the same one), and gives a new one when the folder was removed and made again.
    private func refreshWatches(_ state: inout State) {
        let needed = Set(state.watched.values.map(\.folder))
        for (folder, watch) in state.watches where !needed.contains(folder) {
            _ = offstage_inotify_unwatch(inotify, watch)
            state.watches[folder] = nil
            state.folders[watch] = nil
        }
        for folder in needed {
            let watch = offstage_inotify_watch_directory(inotify, folder)
            guard watch >= 0 else { continue }
            if let old = state.watches[folder], old != watch { state.folders[old] = nil }
            state.watches[folder] = watch
            state.folders[watch] = folder
        }
    }

    /// The folder of `path`, or its nearest ancestor that exists as a folder.
    static func watchableFolder(of path: String) -> String {
        var components = path.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        while !components.isEmpty {
            let folder = "/" + components.joined(separator: "/")
            var status = stat()
            if stat(folder, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { return folder }
            components = components.dropLast()
        }
        return "/"
    }
}
