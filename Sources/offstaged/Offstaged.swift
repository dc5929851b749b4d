import ArgumentParser
import COffstageSystem
import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageDaemon
import OffstageProtocol
import ServiceLifecycle

/// `offstaged`: the Offstage daemon, in the foreground.
@main
struct Offstaged: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offstaged",
        abstract: "The Offstage daemon: owns every app's lifecycle and background time.",
        discussion: """
            Runs in the foreground until SIGTERM or SIGINT, which end every app (will-terminate, then signals) before \
            the daemon exits. Apps outlive a crash or kill -9 and are re-adopted by the next start.
            The state folder is --state-dir, else $OFFSTAGE_STATE_DIR, else $XDG_STATE_HOME/offstage, else \
            ~/.local/state/offstage. The socket is --socket, else $OFFSTAGE_SOCKET, else \
            $XDG_RUNTIME_DIR/offstage/offstaged.sock, else offstaged.sock in the state folder.
            --config names a JSON file with any of the settings documented in the README (timeouts, budgets, freezer).
            Delivered notifications are also shown by the desktop's notification service on the session bus at \
            $DBUS_SESSION_BUS_ADDRESS, unless the setting desktopNotifications is off; the log says at start whether.
            """,
        version: offstageVersion)

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where the daemon keeps its state.", valueName: "DIR"))
    var stateDirectory: String?

    @Option(help: ArgumentHelp("The Unix socket to listen on.", valueName: "PATH"))
    var socket: String?

    @Option(help: ArgumentHelp("A JSON file of settings.", valueName: "FILE"))
    var config: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "notice"

    /// Starts from a clean signal mask (see ``SignalMask``) before any thread exists, then runs the command.
    static func main() async {
        SignalMask.unblockAll()
        // Swift concurrency's default executor on Linux runs on libdispatch's global queues, and once those are used
        // libdispatch wakes the process every second to watch its thread pool. The daemon's tasks run on NIO's event
        // loops instead, so an idle daemon makes no wake-ups at all (SPEC §11).
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        await main(nil)
    }

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        let environment = ProcessInfo.processInfo.environment
        // Two malloc arenas, not eight per core: the daemon's threads (the event loop, the store's readers, the
        // start-up's decoding) each keep freed memory in their own, which with 64,000 notifications read back is
        // megabytes (SPEC §11: 64 MB). MALLOC_ARENA_MAX in the environment still decides.
        if environment["MALLOC_ARENA_MAX"] == nil { _ = offstage_heap_limit_arenas(2) }
        let state = URL(fileURLWithPath: stateDirectory ?? OffstageSocketPath.defaultStateDirectory(environment: environment))
            .standardizedFileURL.path
        // Absolute: apps are started in their own data folders and are told this path.
        let socketPath = URL(fileURLWithPath: OffstageSocketPath.resolve(
            explicit: socket, environment: environment, stateDirectory: state)).standardizedFileURL.path
        var daemonConfiguration = DaemonConfiguration(stateDirectory: state, socketPath: socketPath)
        if let config {
            do {
                (daemonConfiguration.core, daemonConfiguration.daemon) = try DaemonConfiguration.settings(fromFile: config)
            } catch {
                // One line naming the file, the key and the fix: a usage summary after it would only bury it.
                FileHandle.standardError.write(Data("offstaged: \(error)\n".utf8))
                throw ExitCode(78)  // EX_CONFIG
            }
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "offstaged")
        // Orphans of apps are re-parented to the daemon, which reaps them (never leaves zombies to PID 1).
        _ = offstage_prctl_set_child_subreaper()
        // Delivered notifications are also shown on the desktop session the daemon runs in (DBUS_SESSION_BUS_ADDRESS).
        let service = OffstageDaemonService(
            configuration: daemonConfiguration, logger: logger,
            notificationDesktop: FreedesktopNotificationDesktop.connector)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: service)]
        // The settings were validated when read, so the address parses here.
        if let listen = daemonConfiguration.daemon.metricsListen.flatMap({ MetricsListenAddress($0) }) {
            let http = MetricsHTTPService(address: listen, metrics: service.metrics, logger: logger)
            services.append(.init(service: http))
        }
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        // SIGTERM and SIGINT shut the group down gracefully; heard on a thread of the daemon's own, not by a dispatch
        // signal source, whose manager thread would wake the idle daemon every second.
        let signals = try ShutdownSignals { Task { await group.triggerGracefulShutdown() } }
        defer { signals.stop() }
        try await group.run()
    }
}
