import OffstageCore

/// The usage statistics of a trace that published studies report, to compare a trace with them (and a synthetic
/// trace with the parameters it was generated from).
///
/// A **screen session** is a screen-on span; a **glance** is a screen session in which no app session starts.
/// Hours are hours of the day in UTC (the generator's traces are in UTC).
public struct TraceSummary: Hashable, Sendable {
    /// The trace's length in days.
    public let days: Double
    /// Screen sessions per day.
    public let screenSessionsPerDay: Double
    /// The share of screen sessions that are glances.
    public let glanceShare: Double
    /// The share of non-glance screen sessions in which exactly one app session starts.
    public let singleAppShare: Double
    /// The mean number of app sessions starting in a non-glance screen session.
    public let appSessionsPerScreenSession: Double
    /// App sessions (opens) per day.
    public let opensPerDay: Double
    /// Screen-on hours per day.
    public let screenOnHoursPerDay: Double
    /// The median length of an app session.
    public let medianSessionLength: Duration
    /// The mean length of an app session.
    public let meanSessionLength: Duration
    /// The share of app sessions shorter than 15 s (micro-usage, Ferreira et al. 2014).
    public let shortSessionShare: Double
    /// Opens per app, most opened first (ties by label).
    public let opensByApp: [AppCount]
    /// Opens that started in each hour of the day, index 0 to 23.
    public let opensByHour: [Int]

    /// An app and how many times it was opened.
    public struct AppCount: Hashable, Sendable {
        /// The app's label.
        public let app: String
        /// How many sessions it has.
        public let opens: Int
    }

    /// Summarises `trace`.
    public init(_ trace: UsageTrace) {
        days = trace.days
        let perDay = trace.days > 0 ? 1 / trace.days : 0
        screenSessionsPerDay = Double(trace.screenOn.count) * perDay
        var startsPerSpan = [Int](repeating: 0, count: trace.screenOn.count)
        for session in trace.sessions {
            if let index = Self.spanIndex(of: session.start, in: trace.screenOn) { startsPerSpan[index] += 1 }
        }
        let used = startsPerSpan.filter { $0 > 0 }
        glanceShare =
            trace.screenOn.isEmpty ? 0 : Double(startsPerSpan.count - used.count) / Double(trace.screenOn.count)
        singleAppShare = used.isEmpty ? 0 : Double(used.filter { $0 == 1 }.count) / Double(used.count)
        appSessionsPerScreenSession = used.isEmpty ? 0 : Double(used.reduce(0, +)) / Double(used.count)
        opensPerDay = Double(trace.sessions.count) * perDay
        screenOnHoursPerDay = trace.screenOnTime.inSeconds / 3600 * perDay
        let lengths = trace.sessions.map(\.duration).sorted()
        medianSessionLength = lengths.isEmpty ? .zero : Quantile.of(sorted: lengths, 0.5)
        meanSessionLength =
            lengths.isEmpty ? .zero : .seconds(double: lengths.reduce(0) { $0 + $1.inSeconds } / Double(lengths.count))
        shortSessionShare =
            lengths.isEmpty ? 0 : Double(lengths.filter { $0 < .seconds(15) }.count) / Double(lengths.count)
        var counts: [String: Int] = [:]
        for session in trace.sessions { counts[session.app, default: 0] += 1 }
        opensByApp = counts.map { AppCount(app: $0.key, opens: $0.value) }
            .sorted { ($1.opens, $0.app) < ($0.opens, $1.app) }
        var hours = [Int](repeating: 0, count: 24)
        for session in trace.sessions { hours[Self.hourOfDay(session.start)] += 1 }
        opensByHour = hours
    }

    /// The UTC hour of the day of `instant`, 0 to 23.
    public static func hourOfDay(_ instant: Instant) -> Int {
        let secondsPerDay: Int64 = 86_400
        let seconds = instant.nanosecondsSinceEpoch / 1_000_000_000
        let ofDay = ((seconds % secondsPerDay) + secondsPerDay) % secondsPerDay
        return Int(ofDay / 3600)
    }

    private static func spanIndex(of instant: Instant, in spans: [Span]) -> Int? {
        var low = 0
        var high = spans.count
        while low < high {
            let mid = (low + high) / 2
            if spans[mid].start <= instant { low = mid + 1 } else { high = mid }
        }
        return low > 0 && spans[low - 1].contains(instant) ? low - 1 : nil
    }
}
