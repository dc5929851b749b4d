import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageCore
@testable import OffstageDaemon
import Synchronization

/// A desktop that records what it is asked and answers only when the test says so.
final class RecordingDesktop: NotificationDesktop {
    struct State {
        var shown: [(token: UInt64, content: NotificationDesktopContent)] = []
        var withdrawn: [UInt32] = []
        var refuseToSend = false
    }

    struct Refused: Error {}

    let state = Mutex(State())
    let description = "a desktop recording what it is asked"

    func show(_ content: NotificationDesktopContent, token: UInt64) throws {
        try state.withLock { state in
            if state.refuseToSend { throw Refused() }
            state.shown.append((token, content))
        }
    }

    func withdraw(desktopID: UInt32) throws {
        state.withLock { $0.withdrawn.append(desktopID) }
    }

    var shown: [(token: UInt64, content: NotificationDesktopContent)] { state.withLock { $0.shown } }
    var withdrawn: [UInt32] { state.withLock { $0.withdrawn } }
}

/// Process control that starts nothing and freezes nothing: the engine's apps here are pids nobody runs.
struct InertProcessControl: ProcessControl {
    var kind: FreezerKind { .signalStop }
    func makeGroup(forApp key: String) throws -> AppGroup {
        AppGroup(key: key, kind: .signalStop, directoryName: key, cgroupPath: nil)
    }
    func spawn(_ request: SpawnRequest, in group: AppGroup) throws -> Int32 {
        throw ProcessControlError.noSuchProcess(pid: 0)
    }
    func adopt(pid: Int32, into group: AppGroup) throws {}
    func freeze(_ group: AppGroup, leader: Int32) throws {}
    func thaw(_ group: AppGroup, leader: Int32) throws {}
    func terminate(_ group: AppGroup, leader: Int32) throws {}
    func kill(_ group: AppGroup, leader: Int32) throws {}
    func isFrozen(_ group: AppGroup, leader: Int32) -> Bool { false }
    func members(of group: AppGroup, leader: Int32) -> [Int32] { [] }
    func appKey(owningPid pid: Int32) -> String? { nil }
    func removeGroup(_ group: AppGroup) {}
    func removeAll() {}
}

/// A daemon engine on a real event loop over a store in a temporary folder, with one installed app whose process
/// (a pid nobody runs) is adopted and in the background, so notifications of it go to the user.
final class NotificationEngineFixture: Sendable {
    static let app: AppID = "com.example.alarm"
    static let pid: Int32 = 999_999

    let folder: String
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let threadPool = NIOThreadPool(numberOfThreads: 1)
    var loop: any EventLoop { group.next() }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-nte-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        threadPool.start()
    }

    /// A new engine over the fixture's store (a restart when one ran before), started with `desktop` (nil: none).
    func engine(desktop: (any NotificationDesktop)?, settings: DaemonSettings = .init()) throws -> DaemonEngine {
        let configuration = DaemonConfiguration(
            stateDirectory: folder + "/state", socketPath: folder + "/sock", daemon: settings)
        let store = try OffstageStore(path: folder + "/offstage.sqlite")
        let (loop, threadPool) = (loop, threadPool)
        return try loop.submit {
            let engine = try DaemonEngine(
                configuration: configuration, eventLoop: loop, store: store, control: InertProcessControl(),
                freezerReason: "tests", threadPool: threadPool,
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), metrics: DaemonMetrics())
            if engine.core.apps[Self.app] == nil {
                let app = InstalledApp(
                    manifest: Manifest(id: Self.app, executable: "Alarm"), bundlePath: self.folder + "/bundle",
                    installedAt: engine.now, settings: AppSettings())
                engine.apply(try engine.core.install(app, at: engine.now).1)
            }
            engine.useDesktop(desktop, unavailable: "none in this test")
            engine.start()
            engine.apply(engine.core.adopt(Self.app, pid: Self.pid, at: engine.now))
            return engine
        }.wait()
    }

    /// Runs `body` on the engine's loop.
    func onLoop<Result: Sendable>(_ engine: DaemonEngine, _ body: @escaping @Sendable () throws -> Result) throws -> Result {
        try loop.submit(body).wait()
    }

    /// Adds a notification due at once (a date just past fires when time next moves) and lets it fire.
    func fireNow(_ engine: DaemonEngine, _ identifier: String, category: String = "") throws {
        try onLoop(engine) {
            let request = NotificationRequest(
                identifier: identifier,
                content: NotificationContent(title: "Alarm \(identifier)", body: "Wake up", categoryIdentifier: category),
                trigger: .date(engine.now))
            engine.apply(try engine.core.addNotification(Self.app, pid: Self.pid, request, at: engine.now).actions)
            // Past its due time (rounded up to the millisecond), whether or not the engine's timer fired already.
            usleep(2_000)
            engine.apply(engine.core.advance(to: engine.now))
        }
    }

    /// The delivery rows, as a restart would read them.
    func deliveries() throws -> [OffstageStore.StoredDelivery] {
        try OffstageStore(path: folder + "/offstage.sqlite").loadNotifications().deliveries
    }

    /// Waits for the engine's writes queued so far.
    func settle(_ engine: DaemonEngine) throws {
        try loop.flatSubmit { engine.durableWrite ?? engine.eventLoop.makeSucceededVoidFuture() }.wait()
    }

    func tearDown() {
        try? threadPool.syncShutdownGracefully()
        try? group.syncShutdownGracefully()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
