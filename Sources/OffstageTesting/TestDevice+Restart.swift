import Foundation
@_spi(Testing) import Offstage
import OffstageCore
import OffstageHost
import OffstageSimulator

extension TestDevice {
    /// The system's daemon restarts while the device runs on, as `offstaged` restarted by its supervisor (SPEC LC-8):
    /// what its store keeps comes back — each app's scheduled work and settings, notifications, held pushes, background
    /// transfers, registered accessories — and the app's process, still running, is adopted and attaches again,
    /// reporting what its SDK knows (its state, open background tasks). The SDK then registers again what the old
    /// daemon knew of the process and the new one does not: its VoIP socket and keep-alive, accessories, location
    /// updates and open background sessions. A callback the old daemon had handed out and that the app had not
    /// answered is forgotten with it.
    public func restartDaemon() async throws {
        try await runUntilIdle()
        // The old daemon's copies of handed-off descriptors close with it.
        host.closeHandedOff()
        let pid = host.with { state in
            state.unanswered = [:]
            state.simulation.restartDaemon()
            return state.current?.pid
        }
        if let pid {
            let report = AttachReport(InProcessApp.attachReport(), at: host.with { $0.simulation.now })
            try host.with { state in try refusing { try state.simulation.externalReattached(pid, report: report) } }
            InProcessApp.reattached()
        }
        try await runUntilIdle()
    }
}
