/// What the probe app measured in `--calls` mode and writes as JSON for the benchmark to read. Every sample is in
/// nanoseconds; SDK samples and bare samples were taken in alternating blocks by the same thread of the same
/// process, so both saw the same machine.
public struct CallsReport: Codable, Sendable {
    /// `beginBackgroundTask` alone.
    public var begin: [UInt64] = []
    /// `endBackgroundTask` alone.
    public var end: [UInt64] = []
    /// The pair, begin then end.
    public var pair: [UInt64] = []
    /// One bare round trip with the sizes of the begin request and reply.
    public var bareBegin: [UInt64] = []
    /// One bare round trip with the sizes of the end request and reply.
    public var bareEnd: [UInt64] = []
    /// Both bare round trips back to back.
    public var barePair: [UInt64] = []
    /// Bytes on the wire, NUL included: begin request, begin reply, end request, end reply.
    public var sizes: [Int] = []
    /// Begins that returned the invalid identifier (should be 0).
    public var invalidTasks = 0
    /// CPU time of the measuring thread during the recorded SDK blocks, ns (the SDK's share of each call).
    public var sdkClientCPU: UInt64 = 0
    /// CPU time of the measuring thread during the recorded bare blocks, ns.
    public var bareClientCPU: UInt64 = 0
    /// CPU time the daemon (the app's parent) used from the first to the last recorded block, ns; the daemon
    /// serves only the SDK calls in that span, since the bare blocks bypass it.
    public var daemonCPU: UInt64 = 0

    /// An empty report.
    public init() {}
}

/// The timestamps (CLOCK_MONOTONIC, ns) the probe app sends in `--lifecycle` mode, one datagram per
/// did-become-active. Handler times of the trip to the background are those of the most recent one.
public struct LifecycleStamp: Sendable, Hashable {
    /// When `applicationDidBecomeActive` began.
    public var didBecomeActive: UInt64
    /// When `applicationWillEnterForeground` began and returned (0 if it did not run on this trip).
    public var willEnterForeground: (start: UInt64, end: UInt64)
    /// When `applicationWillResignActive` began and returned, on the last trip to the background.
    public var willResignActive: (start: UInt64, end: UInt64)
    /// When `applicationDidEnterBackground` began and returned, on the last trip to the background.
    public var didEnterBackground: (start: UInt64, end: UInt64)

    /// Builds a stamp.
    public init(
        didBecomeActive: UInt64, willEnterForeground: (UInt64, UInt64), willResignActive: (UInt64, UInt64),
        didEnterBackground: (UInt64, UInt64)
    ) {
        self.didBecomeActive = didBecomeActive
        self.willEnterForeground = willEnterForeground
        self.willResignActive = willResignActive
        self.didEnterBackground = didEnterBackground
    }

    /// Seven decimal numbers separated by spaces.
    public var encoded: [UInt8] {
        let numbers = [
            didBecomeActive, willEnterForeground.start, willEnterForeground.end, willResignActive.start,
            willResignActive.end, didEnterBackground.start, didEnterBackground.end,
        ]
        return Array(numbers.map { String($0) }.joined(separator: " ").utf8)
    }

    /// Parses ``encoded``.
    public init?(decoding bytes: [UInt8]) {
        let numbers = String(decoding: bytes, as: UTF8.self).split(separator: " ").compactMap { UInt64($0) }
        guard numbers.count == 7 else { return nil }
        self.init(
            didBecomeActive: numbers[0], willEnterForeground: (numbers[1], numbers[2]),
            willResignActive: (numbers[3], numbers[4]), didEnterBackground: (numbers[5], numbers[6]))
    }

    public static func == (lhs: LifecycleStamp, rhs: LifecycleStamp) -> Bool { lhs.encoded == rhs.encoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }
}

/// What one probe app measured in a round of the scale benchmark's concurrent load (`--scale --listen`): its
/// `beginBackgroundTask`/`endBackgroundTask` calls through the SDK, each timed alone (ns), and when (CLOCK_MONOTONIC,
/// which is system-wide) its first call started and its last one returned, so the benchmark can put the rounds of
/// many apps on one time line.
public struct ConcurrentCallsReport: Codable, Sendable {
    /// The app that made the calls.
    public var app = ""
    /// `beginBackgroundTask` alone.
    public var begin: [UInt64] = []
    /// `endBackgroundTask` alone.
    public var end: [UInt64] = []
    /// When the first call started.
    public var start: UInt64 = 0
    /// When the last call returned.
    public var finish: UInt64 = 0
    /// Begins that returned the invalid identifier (should be 0).
    public var invalidTasks = 0

    /// An empty report.
    public init() {}
}

/// The datagram a probe app in `--scale` mode sends once it is active: which app, its pid, how many task requests
/// the daemon accepted through the SDK and how many it refused (with the first refusal's message).
public struct ScaleReady: Sendable, Hashable {
    public var app: String
    public var pid: Int32
    public var submitted: Int
    public var refused: Int
    public var firstError: String

    public init(app: String, pid: Int32, submitted: Int, refused: Int, firstError: String) {
        self.app = app
        self.pid = pid
        self.submitted = submitted
        self.refused = refused
        self.firstError = firstError
    }

    /// Tab-separated fields.
    public var encoded: [UInt8] {
        Array([app, String(pid), String(submitted), String(refused), firstError].joined(separator: "\t").utf8)
    }

    /// Parses ``encoded``.
    public init?(decoding bytes: [UInt8]) {
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 5, let pid = Int32(fields[1]), let submitted = Int(fields[2]), let refused = Int(fields[3])
        else { return nil }
        self.init(app: String(fields[0]), pid: pid, submitted: submitted, refused: refused, firstError: String(fields[4]))
    }
}
