import Foundation
import Offstage
import OffstageBenchKit

/// The probe's `--voip --connect SOCKET --report SOCKET` mode: it connects to the benchmark's stream socket, hands
/// that connection to the daemon (SPEC MODE-2), and from each wake-up handler sends the moment the handler began
/// (CLOCK_MONOTONIC, ns, as decimal text) to the report socket, after reading the byte that woke it.
@MainActor
final class VoIPProbe {
    let report: String
    var connection: Int32 = -1
    var reportSocket: Int32 = -1

    init(report: String) {
        self.report = report
    }

    /// Connects and hands the connection off; says on standard output whether that worked.
    func start(connect path: String) {
        do {
            connection = try UnixSocket.connect(path: path)
            _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
            reportSocket = try UnixSocket.datagram()
            try Application.shared.setVoIPSocket(connection) { [weak self] _ in self?.woken() }
            print("probe: VoIP socket handed off")
        } catch {
            print("probe: VoIP setup failed: \(error)")
        }
    }

    /// The handler: its first act is the timestamp; then it reads what came and reports.
    func woken() {
        let now = MonotonicClock.now()
        var byte: UInt8 = 0
        while recv(connection, &byte, 1, 0) == 1 {}
        do {
            try UnixSocket.send(reportSocket, datagram: Array(String(now).utf8), to: report)
        } catch {
            print("probe: cannot report to \(report): \(error)")
        }
    }
}
