import Foundation
import OffstageProtocol

/// Plain-text layouts of background transfers.
extension Table {
    /// One row per transfer, oldest first: whose, which, how far, and why it waits or how it ended.
    static func transfers(_ transfers: [TransfersControlInterface.TransferMessage], app: String?) -> String {
        guard !transfers.isEmpty else { return app.map { "\($0) has no transfers" } ?? "no transfers" }
        var rows = [["APP", "SESSION", "ID", "KIND", "STATE", "PROGRESS", "WHY"]]
        for transfer in transfers {
            rows.append([
                transfer.app, cell(transfer.session), String(transfer.id), transfer.kind, transfer.state,
                progress(done: transfer.bytesDone, expected: transfer.bytesExpected), why(transfer),
            ])
        }
        return layout(rows)
    }

    /// `1.5 MB / 4.0 MB (37 %)`; `1.5 MB / ?` when the size is not known yet.
    static func progress(done: Int64, expected: Int64?) -> String {
        guard let expected else { return "\(bytes(done)) / ?" }
        guard expected > 0 else { return "\(bytes(done)) / \(bytes(expected))" }
        let percent = min(100, Int(Double(max(0, done)) / Double(expected) * 100))
        return "\(bytes(done)) / \(bytes(expected)) (\(percent) %)"
    }

    /// A byte count for people, in powers of 1000 as file managers show sizes: `0 B`, `999 B`, `1.5 kB`, `12.3 GB`.
    static func bytes(_ count: Int64) -> String {
        guard count >= 1000 else { return "\(count) B" }
        var value = Double(count)
        for unit in ["kB", "MB", "GB", "TB", "PB"] {
            value /= 1000
            // 999.95 would round to "1000.0": it is shown in the next unit.
            if value < 999.95 || unit == "PB" { return String(format: "%.1f ", value) + unit }
        }
        return "\(count) B"
    }

    /// Why a waiting transfer waits (and its last error), how a finished one ended, or how to resume a paused one.
    static func why(_ transfer: TransfersControlInterface.TransferMessage) -> String {
        let lastError = transfer.lastError.map { "last error: " + cell($0, limit: 60) }
        switch transfer.state {
        case "waiting":
            let parts = transfer.waitingFor.map { cell($0, limit: 80) } + [lastError].compactMap { $0 }
            return parts.isEmpty ? "-" : parts.joined(separator: "; ")
        case "running":
            return transfer.attempts > 1 ? "attempt \(transfer.attempts)" + (lastError.map { "; " + $0 } ?? "") : "-"
        case "paused":
            return "resume with `offstage transfers resume \(transfer.id)`"
        case "failed":
            guard let failure = transfer.failure else { return lastError ?? "-" }
            let status = failure.status.map { " \($0)" } ?? ""
            return "\(failure.code)\(status): \(cell(failure.message, limit: 60))"
        case "completed":
            let status = transfer.httpStatus.map { "HTTP \($0)" }
            let finished = transfer.finishedAt.map { "finished " + time($0) }
            let parts = [status, finished].compactMap { $0 }
            return parts.isEmpty ? "-" : parts.joined(separator: ", ")
        default:
            return lastError ?? "-"
        }
    }
}
