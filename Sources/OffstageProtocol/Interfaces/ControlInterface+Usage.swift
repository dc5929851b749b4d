import OffstageCore

/// The wire types of `io.offstage.Control.Usage` (SPEC SET-3). Optionals are written as null rather than left out,
/// so scripts can rely on every key being present.
extension ControlInterface {
    /// `Usage` parameters.
    public struct UsageParameters: Codable, Hashable, Sendable {
        /// One app, or every one.
        public var app: String?
        /// Seconds since the Unix epoch the window starts at; the start of the local day 29 days ago when nil.
        public var since: Double?

        /// Creates parameters.
        public init(app: String? = nil, since: Double? = nil) {
            self.app = app
            self.since = since
        }
    }

    /// What one app used in one part of one day, or of the whole window.
    public struct UsageRow: Codable, Hashable, Sendable {
        public var app: String
        /// The local date, `YYYY-MM-DD`; nil in a sum over the window.
        public var date: String?
        public var foreground: Bool
        public var metered: Bool
        public var received: Int64
        public var sent: Int64
        public var transferReceived: Int64
        public var transferSent: Int64
        public var cpuSeconds: Double
        public var seconds: Double
        public var wakeUps: Int64

        /// The wire form of stored figures: of the key's day, or (`summed`) of the window.
        public init(_ key: UsageKey, _ figures: UsageFigures, summed: Bool = false) {
            app = key.app.rawValue
            date = summed ? nil : UsageDate.text(ofDay: key.day)
            foreground = key.foreground
            metered = key.metered
            received = figures.received
            sent = figures.sent
            transferReceived = figures.transferReceived
            transferSent = figures.transferSent
            cpuSeconds = Double(figures.cpuMicroseconds) / 1_000_000
            seconds = figures.seconds
            wakeUps = figures.wakeUps
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(date, forKey: .date)
            try container.encode(foreground, forKey: .foreground)
            try container.encode(metered, forKey: .metered)
            try container.encode(received, forKey: .received)
            try container.encode(sent, forKey: .sent)
            try container.encode(transferReceived, forKey: .transferReceived)
            try container.encode(transferSent, forKey: .transferSent)
            try container.encode(cpuSeconds, forKey: .cpuSeconds)
            try container.encode(seconds, forKey: .seconds)
            try container.encode(wakeUps, forKey: .wakeUps)
        }

        /// The figures again (the CLI sums them).
        public var figures: UsageFigures {
            UsageFigures(
                received: received, sent: sent, transferReceived: transferReceived, transferSent: transferSent,
                cpuMicroseconds: Int64(cpuSeconds * 1_000_000), seconds: seconds, wakeUps: wakeUps)
        }
    }

    /// An app's memory on one day, or over the window.
    public struct UsageMemory: Codable, Hashable, Sendable {
        public var app: String
        /// The local date; nil over the window.
        public var date: String?
        public var lastBytes: Int64
        public var peakBytes: Int64

        /// The wire form of a stored reading: of the key's day, or (`summed`) of the window up to that day.
        public init(_ key: UsageDay, _ memory: MemoryFigures, summed: Bool = false) {
            app = key.app.rawValue
            date = summed ? nil : UsageDate.text(ofDay: key.day)
            lastBytes = memory.last
            peakBytes = memory.peak
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(date, forKey: .date)
            try container.encode(lastBytes, forKey: .lastBytes)
            try container.encode(peakBytes, forKey: .peakBytes)
        }
    }

    /// An installed app beside its figures.
    public struct UsageApp: Codable, Hashable, Sendable {
        public var app: String
        public var backgroundRefresh: Bool
        public var backgroundData: Bool
        public var backgroundActivity: Bool
        public var unrestrictedData: Bool
        public var keptInMemory: Bool
        public var state: String
        public var memoryBytes: Int64?

        /// The app's switches and state, and its memory now.
        public init(_ app: AppID, _ settings: AppSettings, state: ApplicationState, memoryBytes: Int64?) {
            self.app = app.rawValue
            backgroundRefresh = settings.backgroundRefresh
            backgroundData = settings.backgroundData
            backgroundActivity = settings.backgroundActivity
            unrestrictedData = settings.unrestrictedData
            keptInMemory = settings.keptInMemory
            self.state = state.rawValue
            self.memoryBytes = memoryBytes
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(backgroundRefresh, forKey: .backgroundRefresh)
            try container.encode(backgroundData, forKey: .backgroundData)
            try container.encode(backgroundActivity, forKey: .backgroundActivity)
            try container.encode(unrestrictedData, forKey: .unrestrictedData)
            try container.encode(keptInMemory, forKey: .keptInMemory)
            try container.encode(state, forKey: .state)
            try container.encode(memoryBytes, forKey: .memoryBytes)
        }
    }

    /// `Usage` reply.
    public struct UsageReply: Codable, Hashable, Sendable {
        /// The window, in seconds since the Unix epoch.
        public var from: Double
        public var to: Double
        /// Days the daemon keeps.
        public var daysKept: Int
        /// `enforced` when the bytes of the apps' own sockets are counted, `advisory` when they cannot be.
        public var bytesCounted: String
        public var rows: [UsageRow]
        public var memory: [UsageMemory]
        public var apps: [UsageApp]

        /// Creates a reply.
        public init(
            from: Double, to: Double, daysKept: Int, bytesCounted: String, rows: [UsageRow], memory: [UsageMemory],
            apps: [UsageApp]
        ) {
            self.from = from
            self.to = to
            self.daysKept = daysKept
            self.bytesCounted = bytesCounted
            self.rows = rows
            self.memory = memory
            self.apps = apps
        }
    }
}

/// Local days as dates: day numbers (days since 1970-01-01) in the proleptic Gregorian calendar.
public enum UsageDate {
    /// `YYYY-MM-DD` of a day number.
    public static func text(ofDay day: Int64) -> String {
        // Howard Hinnant's days-to-civil algorithm.
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(dayOfMonth))"
    }
}
