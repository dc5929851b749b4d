/// What an app used in one part of one day (SPEC SET-3): in front or in the background, on a metered network or
/// not. Sums only: the shell adds what the app's counters moved while a ``UsageContext`` lasted.
public struct UsageFigures: Hashable, Sendable, Codable {
    /// Bytes the app's own sockets received.
    public var received: Int64 = 0
    /// Bytes the app's own sockets sent.
    public var sent: Int64 = 0
    /// Bytes the daemon downloaded for the app's background transfers.
    public var transferReceived: Int64 = 0
    /// Bytes the daemon uploaded for the app's background transfers.
    public var transferSent: Int64 = 0
    /// CPU time of the app's processes, in microseconds.
    public var cpuMicroseconds: Int64 = 0
    /// Seconds the app ran: in front, or in the background and not frozen (its background runtime).
    public var seconds: Double = 0
    /// Background wake-ups: launches into the background and resumes from suspension to run there.
    public var wakeUps: Int64 = 0

    /// Creates figures, zero unless given.
    public init(
        received: Int64 = 0, sent: Int64 = 0, transferReceived: Int64 = 0, transferSent: Int64 = 0,
        cpuMicroseconds: Int64 = 0, seconds: Double = 0, wakeUps: Int64 = 0
    ) {
        self.received = received
        self.sent = sent
        self.transferReceived = transferReceived
        self.transferSent = transferSent
        self.cpuMicroseconds = cpuMicroseconds
        self.seconds = seconds
        self.wakeUps = wakeUps
    }

    /// Every byte, the app's own and its transfers', both ways.
    public var bytes: Int64 { received &+ sent &+ transferReceived &+ transferSent }

    /// Nothing was used.
    public var isZero: Bool { self == UsageFigures() }

    /// Adds `other` (saturating: a corrupt counter cannot trap the daemon).
    public mutating func add(_ other: UsageFigures) {
        func sum(_ a: Int64, _ b: Int64) -> Int64 {
            let (result, overflow) = a.addingReportingOverflow(b)
            return overflow ? (b > 0 ? .max : .min) : result
        }
        received = sum(received, other.received)
        sent = sum(sent, other.sent)
        transferReceived = sum(transferReceived, other.transferReceived)
        transferSent = sum(transferSent, other.transferSent)
        cpuMicroseconds = sum(cpuMicroseconds, other.cpuMicroseconds)
        seconds += other.seconds
        wakeUps = sum(wakeUps, other.wakeUps)
    }
}

/// Which part of which day figures belong to.
public struct UsageKey: Hashable, Sendable, Comparable {
    /// The app.
    public var app: AppID
    /// The local day (days since 1970-01-01 in the device's local time).
    public var day: Int64
    /// In front.
    public var foreground: Bool
    /// On a metered network.
    public var metered: Bool

    /// Creates a key.
    public init(app: AppID, day: Int64, foreground: Bool, metered: Bool) {
        self.app = app
        self.day = day
        self.foreground = foreground
        self.metered = metered
    }

    /// The key of what a context used.
    public init(_ app: AppID, _ context: UsageContext) {
        self.init(app: app, day: context.day, foreground: context.foreground, metered: context.metered)
    }

    public static func < (lhs: UsageKey, rhs: UsageKey) -> Bool {
        (lhs.app, lhs.day, lhs.foreground ? 1 : 0, lhs.metered ? 1 : 0)
            < (rhs.app, rhs.day, rhs.foreground ? 1 : 0, rhs.metered ? 1 : 0)
    }
}

/// An app's memory on one day (SPEC SET-3): the last reading and the largest.
public struct MemoryFigures: Hashable, Sendable, Codable {
    /// Bytes at the last reading.
    public var last: Int64
    /// The most bytes read that day.
    public var peak: Int64

    /// Creates figures.
    public init(last: Int64, peak: Int64) {
        self.last = last
        self.peak = max(peak, last)
    }

    /// Adds a later reading.
    public mutating func add(_ reading: Int64) {
        last = reading
        peak = max(peak, reading)
    }
}
