import Logging
import NIOCore

/// The transfer engine as the benchmarks package reaches it (`@_spi(Benchmarks) import OffstageDaemon`): downloads
/// through a ``HTTPTransferEngine`` exactly as the daemon runs them, with nothing of the engine's own API made
/// public. The loopback throughput benchmark times it against curl (SPEC §11).
@_spi(Benchmarks)
public final class TransferBenchmarkEngine: Sendable {
    /// How one download ended.
    public struct Download: Sendable {
        /// Whether the part file is complete and fsynced.
        public var completed: Bool
        /// The bytes in the part file.
        public var bytes: Int64
        /// The outcome, for the report when it did not complete.
        public var outcome: String
    }

    private let engine: HTTPTransferEngine

    /// An engine on `eventLoopGroup` with up to `maxConnections` connections to a host.
    public init(eventLoopGroup: any EventLoopGroup, maxConnections: Int = 4) {
        var logger = Logger(label: "offstage.transfers.benchmark")
        logger.logLevel = .notice
        engine = HTTPTransferEngine(eventLoopGroup: eventLoopGroup, maxConnections: maxConnections, logger: logger)
    }

    /// Downloads `url` into `partFile` from its first byte (one attempt); `written` hears of the bytes in the part
    /// file at each checkpoint (every `checkpointBytes`), on the engine's event loop, and the download goes on past
    /// the next checkpoint only once it returned (as the daemon's journal confirms each one).
    public func download(
        _ url: String, to partFile: String, checkpointBytes: Int64 = 1 << 20, written: @escaping @Sendable (Int64) -> Void
    ) async -> Download {
        var job = HTTPTransferJob.download(url, to: partFile)
        job.checkpointBytes = checkpointBytes
        // Held to its checkpoints as in the daemon; `written` stands for the journal, confirmed when it returns.
        let gate = CheckpointGate()
        job.gate = gate
        let outcome = await engine.run(job) { event in
            if case .checkpoint(let bytes, _) = event {
                written(bytes)
                gate.journaledNext()
            }
        }
        if case .completed = outcome { return Download(completed: true, bytes: outcome.bytesDone, outcome: "\(outcome)") }
        return Download(completed: false, bytes: outcome.bytesDone, outcome: "\(outcome)")
    }

    /// Ends the engine's client.
    public func shutdown() async throws {
        try await engine.shutdown()
    }
}
