import Foundation
import Offstage
import OffstageBenchKit

/// The probe's `--push --report SOCKET [--exit]` mode (SPEC NT-3, NT-4): at launch it registers for remote
/// notifications and sends `registered <token>` to the report socket (or `failed <error>`); with `--exit` it then
/// exits, leaving its token with the daemon (the throughput benchmark's apps). Its remote-notification handler — the
/// completion-handler form, the first code of the app a background push runs — takes the moment it began
/// (CLOCK_MONOTONIC, ns), sends it as decimal text to the report socket and completes with `.newData`.
@MainActor
final class PushProbe {
    let report: String
    let exitAfterRegistering: Bool
    var reportSocket: Int32 = -1

    init(report: String, exit: Bool) {
        self.report = report
        self.exitAfterRegistering = exit
    }

    /// Registers, then reports the token (and exits with `--exit`).
    func start() {
        do {
            reportSocket = try UnixSocket.datagram()
        } catch {
            print("probe: cannot make the report socket: \(error)")
            return
        }
        Task {
            do {
                let registration = try await Application.shared.registerForRemoteNotifications()
                send("registered \(registration.token)")
            } catch {
                send("failed \(error)")
            }
            // After the report, from the main queue: the benchmark has its token before the app's process ends.
            if exitAfterRegistering { DispatchQueue.main.async { exit(0) } }
        }
    }

    /// The handler's first act was its timestamp (`began`); this reports it.
    func handled(began: UInt64) {
        send(String(began))
    }

    private func send(_ text: String) {
        do {
            try UnixSocket.send(reportSocket, datagram: Array(text.utf8), to: report)
        } catch {
            print("probe: cannot report to \(report): \(error)")
        }
    }
}

extension ProbeDelegate {
    /// A background push woke the app: the timestamp first, then the report, then `.newData`.
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable],
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        let began = MonotonicClock.now()
        push?.handled(began: began)
        completionHandler(.newData)
    }
}
