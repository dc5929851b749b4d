import Foundation
import OffstageDaemon
import OffstageProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Thousands of tiny calls in a row on one connection through `VarlinkServer` and `VarlinkConnection`, each answered with
/// its own result; their latency is printed next to a bare round trip of the same bytes over a Unix socket pair with an
/// echo thread, the floor any IPC here stands on. The figure the SPEC asks for is the Benchmarks package's ("SDK call");
/// this run is short (set OFFSTAGE_BENCH_ITERATIONS for a longer one).
@Suite("Varlink round trip")
struct VarlinkRoundTripBenchmark {
    static let iterations = ProcessInfo.processInfo.environment["OFFSTAGE_BENCH_ITERATIONS"].flatMap(Int.init) ?? 2_000
    static let warmUp = 200

    @Test("calls in a row on one connection, with and without a timeout, are each answered with their own result; p50/p99 printed next to a bare socket ping-pong")
    func roundTrip() async throws {
        let message = Array(ipcCallText("io.offstage.Test.Add", ["a": 1, "b": 2]).utf8)
        let bare = try Self.bareRoundTrip(message: message)
        var varlink: (p50: Double, p99: Double) = (0, 0)
        var varlinkWithTimeout: (p50: Double, p99: Double) = (0, 0)
        var calls = 0
        var wrong: [String] = []
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            varlink = try Self.measure {
                calls += 1
                let sum = try connection.call("io.offstage.Test.Add", IPCAdd(a: calls, b: 2), as: IPCSum.self).sum
                if sum != calls + 2 { wrong.append("\(calls) + 2 answered \(sum)") }
            }
            varlinkWithTimeout = try Self.measure {
                calls += 1
                let sum = try connection.call(
                    "io.offstage.Test.Add", IPCAdd(a: calls, b: 2), as: IPCSum.self, timeout: .seconds(5)
                ).sum
                if sum != calls + 2 { wrong.append("\(calls) + 2 answered \(sum) (with a timeout)") }
            }
        }
        func format(_ value: (p50: Double, p99: Double)) -> String {
            String(format: "p50 %.1f µs, p99 %.1f µs", value.p50, value.p99)
        }
        print("Round trip over \(Self.iterations) calls of \(message.count) bytes:")
        print("  bare Unix socket ping-pong:          \(format(bare))")
        let ratio = String(format: "%.1f", varlink.p99 / bare.p99)
        print("  Varlink call (server + client):      \(format(varlink))  (\(ratio)× bare at p99)")
        print("  Varlink call with a timeout (poll):  \(format(varlinkWithTimeout))")
        #if DEBUG
        print("  (a debug build: `swift test -c release --filter VarlinkRoundTripBenchmark` gives representative ones)")
        #endif
        #expect(calls == 2 * (Self.warmUp + Self.iterations))
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    static func measure(_ body: () throws -> Void) throws -> (p50: Double, p99: Double) {
        for _ in 0..<warmUp { try body() }
        var samples = [UInt64](repeating: 0, count: iterations)
        for index in 0..<iterations {
            let start = ipcMonotonicNanoseconds()
            try body()
            samples[index] = ipcMonotonicNanoseconds() - start
        }
        return ipcPercentiles(samples)
    }

    /// Writes `message` to one end of a socket pair and reads it back from an echo thread on the other.
    static func bareRoundTrip(message: [UInt8]) throws -> (p50: Double, p99: Double) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw IPCTestFailure("socketpair failed: errno \(errno)")
        }
        let (client, echo) = (fds[0], fds[1])
        let echoThread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(echo, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                _ = buffer.withUnsafeBytes { send(echo, $0.baseAddress, count, Int32(MSG_NOSIGNAL)) }
            }
            close(echo)
        }
        echoThread.start()
        defer { close(client) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        return try measure {
            _ = message.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var received = 0
            while received < message.count {
                let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { throw IPCTestFailure("echo socket closed") }
                received += count
            }
        }
    }
}
