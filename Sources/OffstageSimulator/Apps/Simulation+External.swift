import Foundation
import OffstageCore

/// Apps whose code runs outside the simulation: the test kit runs an app's real delegate and handlers on the SDK and
/// gives the simulation what they do. The simulation still keeps their processes (frozen, thawed, ended) as for its
/// scripted apps, but what a scripted app's behaviour would do — attach, answer callbacks, begin tasks — comes from
/// outside, through the methods below.
extension Simulation {
    /// What the core did to an external app's process, for the code that runs it.
    public enum ExternalEvent: Sendable, Hashable {
        /// The core started a process of the app, as `pid`; it runs once ``externalAttached(_:)`` is called.
        case launched(AppID, pid: Int32, reason: LaunchReason)
        /// A callback for the app's code.
        case callback(AppID, pid: Int32, Callback)
        /// The process ended (killed, or its code exited).
        case exited(AppID, pid: Int32, ExitStatus)
        /// A download of the app's completed: its file, `body` (nil when the server's bytes were counted, not kept),
        /// is to be handed to the app where the task's messages say.
        case transferHandedOver(TransferTask, body: Data?)
        /// The system forgot a task of the app (acknowledged, or gone with the app): what it kept of it goes.
        case transferRemoved(TransferTask)
    }

    /// Installs (or upgrades) an app whose code runs outside the simulation. An install the core refuses changes
    /// nothing and throws.
    public mutating func installExternal(_ manifest: Manifest, bundlePath: String) throws(CoreError) {
        let app = InstalledApp(manifest: manifest, bundlePath: bundlePath, installedAt: now)
        let (_, actions) = try core.install(app, at: now)
        externalApps.insert(manifest.id)
        perform(actions)
    }

    /// Takes what happened to the external apps' processes since the last call, oldest first.
    public mutating func takeExternalEvents() -> [ExternalEvent] {
        defer { external = [] }
        return external
    }

    /// The external app's process `pid` attached (its SDK started): callbacks can reach it from now on.
    public mutating func externalAttached(_ pid: Int32) throws(CoreError) {
        guard let process = processes[pid], externalApps.contains(process.app) else {
            throw CoreError(.appNotRunning, "no external app runs as pid \(pid)", fix: "attach the pid the launch gave")
        }
        processes[pid]?.attached = true
        perform(try core.attached(process.app, pid: pid, report: .fresh, at: now))
    }

    /// The external app's process `pid` ended by itself with `status`.
    public mutating func externalExited(_ pid: Int32, status: ExitStatus) {
        exitNow(pid, status)
    }

    /// The external app's process `pid` handed off a descriptor — its VoIP socket, or the session to its accessory
    /// `accessory` — and the shell keeps a copy: the core decides; returns the token the descriptor goes by in
    /// ``sockets`` (watched while armed). A refusal changes nothing and throws.
    public mutating func externalHandedOff(_ pid: Int32, accessory: String?) throws(CoreError) -> UInt64 {
        guard let process = processes[pid], externalApps.contains(process.app) else {
            throw CoreError(.appNotRunning, "no external app runs as pid \(pid)", fix: "hand off from the app's running process")
        }
        let token = nextSocketToken
        if let accessory {
            perform(try core.accessorySessionHandedOff(process.app, pid: pid, name: accessory, token: token, at: now))
        } else {
            perform(try core.socketHandedOff(process.app, pid: pid, token: token, at: now))
        }
        nextSocketToken += 1
        return token
    }

    /// The shell saw data, or a hang-up, on the handed-off descriptor `token` while it was watched.
    public mutating func externalSocketEvent(token: UInt64, closed: Bool) {
        guard let socket = sockets[token] else { return }
        perform(core.socketEvent(socket.app, token: token, closed: closed, at: now))
    }

    /// Calls the core for an external app and carries out the actions it returns: what the app's calls do.
    public mutating func callCore<Result>(
        _ body: (inout OffstageCore) throws -> (Result, [CoreAction])
    ) rethrows -> Result {
        let (result, actions) = try body(&core)
        perform(actions)
        return result
    }
}
