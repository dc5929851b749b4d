import OffstageCore

/// The rows of the two Usage Logger files, parsed and sorted, before any session is built.
struct UsageLoggerLog: Sendable {
    /// Which logging mode produced a row.
    enum Source: Sendable, Hashable {
        case retrospective
        case prospective
    }

    /// An app-events row.
    struct AppEvent: Sendable, Hashable {
        var time: Instant
        var app: String
        var isOpen: Bool
        var source: Source
        /// The row's position in its file, to keep ties in file order.
        var order: Int
    }

    /// A device-events row the loader uses.
    struct DeviceEvent: Sendable, Hashable {
        enum Kind: Sendable, Hashable {
            case screenOn
            case screenOff
            /// `keyguard_shown`.
            case locked
            /// `keyguard_hidden` or `user_present`.
            case unlocked
            /// Any other event (notifications, standby buckets …): it only marks the trace's extent.
            case other
        }

        var time: Instant
        var kind: Kind
        var source: Source
        var order: Int
    }

    /// App events, sorted by time, closes before opens at the same instant, then file order.
    var appEvents: [AppEvent]
    /// Device events, sorted by time, then file order.
    var deviceEvents: [DeviceEvent]
    /// The first event of either file.
    var start: Instant
    /// The last event of either file.
    var end: Instant

    static let appFile = "app events"
    static let deviceFile = "device events"

    init(appEventsCSV: String, deviceEventsCSV: String) throws(UsageLoggerError) {
        let appTable = CSVTable(parsing: appEventsCSV)
        let deviceTable = CSVTable(parsing: deviceEventsCSV)
        appEvents = try Self.appEvents(appTable).sorted {
            ($0.time, $0.isOpen ? 1 : 0, $0.order) < ($1.time, $1.isOpen ? 1 : 0, $1.order)
        }
        deviceEvents = try Self.deviceEvents(deviceTable).sorted { ($0.time, $0.order) < ($1.time, $1.order) }
        let times = appEvents.map(\.time) + deviceEvents.map(\.time)
        guard let first = times.min(), let last = times.max() else { throw .noEvents }
        start = first
        end = last
    }

    private static func columns(
        _ names: [String], in table: CSVTable, file: String
    ) throws(UsageLoggerError) -> [Int] {
        var indices: [Int] = []
        for name in names {
            guard let index = table.column(name) else { throw .missingColumn(file: file, column: name) }
            indices.append(index)
        }
        return indices
    }

    private static func source(_ text: String, file: String, line: Int) throws(UsageLoggerError) -> Source {
        switch text {
        case "retrospective_usagestats": return .retrospective
        case "prospective_foreground_poll": return .prospective
        default: throw .unknownValue(file: file, line: line, column: "source", value: text)
        }
    }

    private static func time(_ text: String, file: String, line: Int) throws(UsageLoggerError) -> Instant {
        guard let instant = Instant(iso8601: text) else { throw .badTimestamp(file: file, line: line, text: text) }
        return instant
    }

    private static func appEvents(_ table: CSVTable) throws(UsageLoggerError) -> [AppEvent] {
        let file = appFile
        let index = try columns(["app_id", "event", "timestamp", "source"], in: table, file: file)
        var events: [AppEvent] = []
        for (order, row) in table.rows.enumerated() {
            let event = row[index[1]] ?? ""
            guard event == "open" || event == "close" else {
                throw .unknownValue(file: file, line: row.line, column: "event", value: event)
            }
            events.append(
                AppEvent(
                    time: try time(row[index[2]] ?? "", file: file, line: row.line), app: row[index[0]] ?? "",
                    isOpen: event == "open", source: try source(row[index[3]] ?? "", file: file, line: row.line),
                    order: order))
        }
        return events
    }

    private static func deviceEvents(_ table: CSVTable) throws(UsageLoggerError) -> [DeviceEvent] {
        let file = deviceFile
        let index = try columns(["event", "timestamp", "source"], in: table, file: file)
        var events: [DeviceEvent] = []
        for (order, row) in table.rows.enumerated() {
            let kind: DeviceEvent.Kind =
                switch row[index[0]] ?? "" {
                case "screen_interactive", "screen_on": .screenOn
                case "screen_non_interactive", "screen_off": .screenOff
                case "keyguard_shown": .locked
                case "keyguard_hidden", "user_present": .unlocked
                default: .other
                }
            events.append(
                DeviceEvent(
                    time: try time(row[index[1]] ?? "", file: file, line: row.line), kind: kind,
                    source: try source(row[index[2]] ?? "", file: file, line: row.line), order: order))
        }
        return events
    }
}
