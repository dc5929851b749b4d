import Foundation
import Glibc
import Logging
import NIOPosix
import NIOSSL
@testable import OffstageDaemon
import Synchronization

/// An engine on an event loop of its own and a temporary folder `/tmp/offstage-transfer-XXXXXX` for part files, for
/// the transfer engine's tests; ``close()`` shuts both down.
final class TransferEngineFixture: Sendable {
    /// The events one job reported, in order.
    final class Events: Sendable {
        private let events = Mutex<[HTTPTransferEvent]>([])
        /// Records `event` (the callback handed to the engine).
        func record(_ event: HTTPTransferEvent) { events.withLock { $0.append(event) } }
        /// Everything recorded so far.
        var all: [HTTPTransferEvent] { events.withLock { $0 } }
        /// The responseStarted events.
        var starts: [HTTPTransferEvent] { all.filter { if case .responseStarted = $0 { true } else { false } } }
        /// The checkpoints' byte counts.
        var checkpoints: [Int64] {
            all.compactMap { if case .checkpoint(let bytes, _) = $0 { bytes } else { nil } }
        }
    }

    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let engine: HTTPTransferEngine
    /// Where the tests put their part files.
    let folder: String

    /// `trusting`: a PEM certificate the engine trusts (instead of the system's store), for TLS tests.
    init(now: (@Sendable () -> Date)? = nil, trusting certificate: String? = nil) throws {
        var template = Array("/tmp/offstage-transfer-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp failed: errno \(errno)") }
        folder = String(cString: made)
        var logger = Logger(label: "offstage.transfers.test")
        logger.logLevel = .notice
        if let certificate {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate))
            engine = HTTPTransferEngine(eventLoopGroup: group, maxConnections: 4, logger: logger, now: now ?? { Date() }, tls: tls)
        } else if let now {
            engine = HTTPTransferEngine(eventLoopGroup: group, maxConnections: 4, logger: logger, now: now)
        } else {
            engine = HTTPTransferEngine(eventLoopGroup: group, maxConnections: 4, logger: logger)
        }
    }

    /// Runs `job` to its end; its outcome and the events it reported.
    func run(_ job: HTTPTransferJob) async -> (HTTPTransferOutcome, Events) {
        let events = Events()
        let outcome = await engine.run(job) { events.record($0) }
        return (outcome, events)
    }

    /// Shuts the engine and its loop down and removes the folder.
    func close() async throws {
        try await engine.shutdown()
        try await group.shutdownGracefully()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs `body` with a fixture, and closes it whatever happens.
    static func with(
        now: (@Sendable () -> Date)? = nil, trusting certificate: String? = nil, _ body: (TransferEngineFixture) async throws -> Void
    ) async throws {
        let fixture = try TransferEngineFixture(now: now, trusting: certificate)
        do {
            try await body(fixture)
        } catch {
            try await fixture.close()
            throw error
        }
        try await fixture.close()
    }

    /// `count` random bytes.
    static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        var data = Data(count: count)
        data.withUnsafeMutableBytes { bytes in
            var index = 0
            while index < bytes.count {
                var word = generator.next()
                let take = min(8, bytes.count - index)
                withUnsafeBytes(of: &word) { bytes.baseAddress!.advanced(by: index).copyMemory(from: $0.baseAddress!, byteCount: take) }
                index += take
            }
        }
        return data
    }

    /// The contents of `path` (empty when unreadable).
    static func contents(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    /// A test could not set itself up.
    struct FixtureError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
