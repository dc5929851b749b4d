/// Why a pair of Usage Logger CSV files could not be read.
public enum UsageLoggerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A file lacks a column the loader needs.
    case missingColumn(file: String, column: String)
    /// A row's timestamp is not an ISO 8601 UTC timestamp.
    case badTimestamp(file: String, line: Int, text: String)
    /// A row holds a value the loader does not know (an app event other than open/close, an unknown source).
    case unknownValue(file: String, line: Int, column: String, value: String)
    /// Neither file holds a single event.
    case noEvents
    /// The events could not be turned into a valid trace (a bug in the loader's repairs).
    case invalidTrace(UsageTraceError)

    public var description: String {
        switch self {
        case .missingColumn(let file, let column): "\(file): no column named \(column)"
        case .badTimestamp(let file, let line, let text): "\(file):\(line): not an ISO 8601 UTC timestamp: \(text)"
        case .unknownValue(let file, let line, let column, let value): "\(file):\(line): unknown \(column) \(value)"
        case .noEvents: "the files hold no events"
        case .invalidTrace(let error): "the loaded trace breaks an invariant: \(error)"
        }
    }
}
