import Benchmark
import Foundation
import OffstageBenchKit

/// The measuring loop of the mode wake-up benchmarks (VoIP socket, accessory session): in each round, with the app
/// frozen, something arrives on the channel it handed off and the app's handler reports when it began; then, as the
/// baseline in the same loop, the echo helper (frozen by a cgroup of our own) is sent a request, thawed and read.
struct WakeRounds {
    static let iterations = 300
    static let warmup = 10
    /// Between two steps, so each cgroup change stays clear of the kernel's limit on cgroup.events notifications.
    static let gapMilliseconds: UInt64 = 15

    /// Wake-up latencies, channel write → handler began (ns).
    var handler: [UInt64] = []
    /// Baseline latencies, request written → thawed helper's answer read (ns).
    var bare: [UInt64] = []

    /// Runs the rounds. `trigger` writes to the app's channel; the app's handler sends its CLOCK_MONOTONIC stamp as
    /// decimal text to `stamps`; `failure` describes the app when no stamp comes within 10 s.
    static func measure(
        app appObserver: any FreezeObserver, stamps: Int32, baseline: EchoBaseline, trigger: () throws -> Void,
        failure: (_ round: Int) -> String
    ) throws -> WakeRounds {
        let (raw, rawConnection) = (baseline.raw, baseline.connection)
        let rawRequest = EchoWire.request(size: 8, replySize: 2)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
        defer { buffer.deallocate() }
        var rounds = WakeRounds()
        for iteration in 0..<(warmup + iterations) {
            let record = iteration >= warmup

            // Channel data → handler, with the app frozen.
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            _ = try appObserver.wait(frozen: true, timeoutSeconds: 10)
            let start = MonotonicClock.now()
            try trigger()
            guard let bytes = try UnixSocket.receiveDatagram(stamps, timeoutMilliseconds: 10_000),
                let stamp = UInt64(String(decoding: bytes, as: UTF8.self))
            else { throw BenchError(failure(iteration)) }
            if record { rounds.handler.append(stamp &- start) }

            // Bare: a frozen process of our own, thawed to read what came.
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            raw.observer.sync()
            try raw.freeze()
            _ = try raw.observer.wait(frozen: true, timeoutSeconds: 5)
            let bareStart = MonotonicClock.now()
            try rawRequest.withUnsafeBytes { try UnixSocket.writeAll(rawConnection, $0) }
            try raw.thaw()
            guard try UnixSocket.readMessage(rawConnection, into: buffer) > 0 else {
                throw BenchError("the raw helper hung up")
            }
            if record { rounds.bare.append(MonotonicClock.now() - bareStart) }
        }
        return rounds
    }

    /// Records both series and prints them with their ratio under `heading`, after the `context` lines.
    func report(
        _ benchmark: Benchmark, handlerMetric: BenchmarkMetric, bareMetric: BenchmarkMetric, heading: String,
        context: [String], handlerLabel: String
    ) {
        Report.record(benchmark, handlerMetric, handler)
        Report.record(benchmark, bareMetric, bare)
        let woken = Distribution(handler)
        let bareThaw = Distribution(bare)
        Report.heading("\(heading), \(Self.iterations) rounds after \(Self.warmup) warm-up")
        for line in context { Report.line(line) }
        Report.latency(handlerLabel, woken)
        Report.latency("baseline: bare thaw + read (+ its answer)", bareThaw)
        Report.line("ratio: p50 \(Report.ratio(woken.p50, bareThaw.p50)), p99 \(Report.ratio(woken.p99, bareThaw.p99))")
    }
}
