import OffstageCore
import OffstageSimulator

let downloads = "com.example.a.downloads"

func download(_ url: String = "https://files.example.com/big.bin", discretionary: Bool = false, earliestBegin: Instant? = nil) -> TransferRequest {
    TransferRequest(kind: .download, url: url, discretionary: discretionary, earliestBegin: earliestBegin, filename: "")
}

extension Simulation {
    /// App A opened, its session open, with its downloads created; returns their ids.
    static func withDownloads(
        _ urls: [String] = ["https://files.example.com/big.bin"], configuration: CoreConfiguration = .init(),
        session: TransferSessionConfiguration = .init(), sizes: [String: Int64] = [:]
    ) throws -> (Simulation, [UInt64]) {
        var sim = makeSimulation(configuration: configuration)
        sim.transferSizes = sizes
        try sim.openAndSettle(appA)
        sim.openTransferSession(appA, identifier: downloads, configuration: session)
        let ids = urls.compactMap { sim.createTransfer(appA, session: downloads, download($0)) }
        return (sim, ids)
    }

    /// The task as the core has it now.
    func transfer(_ id: UInt64) -> TransferTask? { core.transfers.tasks[id] }

    /// Ends the running attempt of `id` with `result`, as the shell's engine would.
    mutating func endAttempt(_ id: UInt64, _ result: TransferAttemptResult, bytesDone: Int64? = nil) {
        guard let task = transfer(id) else { return }
        if let bytesDone {
            input { core, now in core.transferProgress(id, attempt: task.attempt, bytesDone: bytesDone, bytesExpected: nil, validator: nil, at: now) }
        }
        input { core, now in core.transferEnded(id, attempt: task.attempt, result, at: now) }
    }

    /// The launch reasons of `id`'s launches, in order.
    func launches(of id: AppID) -> [LaunchReason] {
        trace(of: id).compactMap { if case .launched(let reason) = $0.event { reason } else { nil } }
    }
}
