import OffstageCore

/// A usage trace as plain CSV, so anyone can recompute the oracle's frontier with their own code (SPEC §11).
///
/// Times are whole nanoseconds since the trace's start (integers: exact, no rounding):
/// - sessions: `app,open_ns,close_ns` — one foreground session per row, sorted by open; the open is what the
///   freshness metric counts;
/// - screen: `on_ns,off_ns` — one screen-on span `[on, off)` per row, sorted;
/// - frontier: `wake_ups,fresh_opens,fresh_share` — ``OracleFrontier``'s curve.
public enum TraceCSV {
    /// The sessions table of `trace`.
    public static func sessions(_ trace: UsageTrace) -> String {
        var lines = ["app,open_ns,close_ns"]
        for session in trace.sessions {
            lines.append("\(field(session.app)),\(offset(session.start, trace)),\(offset(session.end, trace))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The screen-on table of `trace`.
    public static func screen(_ trace: UsageTrace) -> String {
        var lines = ["on_ns,off_ns"]
        for span in trace.screenOn { lines.append("\(offset(span.start, trace)),\(offset(span.end, trace))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The frontier's curve.
    public static func frontier(_ frontier: OracleFrontier) -> String {
        var lines = ["wake_ups,fresh_opens,fresh_share"]
        for point in frontier.curve {
            let share = frontier.opens == 0 ? 0 : Double(point.freshOpens) / Double(frontier.opens)
            lines.append("\(point.wakeUps),\(point.freshOpens),\(share)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// An error reading the tables back.
    public struct ReadError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, with the line.
        public var description: String
    }

    /// Reads a trace back from its two tables; `start` and `end` are the trace's bounds.
    public static func read(name: String, start: Instant, end: Instant, sessions: String, screen: String) throws
        -> UsageTrace
    {
        let sessionTable = CSVTable(parsing: sessions)
        let screenTable = CSVTable(parsing: screen)
        guard sessionTable.header == ["app", "open_ns", "close_ns"] else {
            throw ReadError(description: "sessions: header \(sessionTable.header)")
        }
        guard screenTable.header == ["on_ns", "off_ns"] else {
            throw ReadError(description: "screen: header \(screenTable.header)")
        }
        func instant(_ row: CSVTable.Row, _ column: Int) throws -> Instant {
            guard let text = row[column], let value = Int64(text) else {
                throw ReadError(description: "line \(row.line): not an integer in column \(column + 1)")
            }
            return start + .nanoseconds(value)
        }
        var parsed: [AppSession] = []
        for row in sessionTable.rows {
            guard let app = row[0] else { throw ReadError(description: "line \(row.line): no app") }
            let (open, close) = (try instant(row, 1), try instant(row, 2))
            guard open <= close else { throw ReadError(description: "line \(row.line): closes before it opens") }
            parsed.append(AppSession(app: app, start: open, end: close))
        }
        var spans: [Span] = []
        for row in screenTable.rows {
            let (on, off) = (try instant(row, 0), try instant(row, 1))
            guard on <= off else { throw ReadError(description: "line \(row.line): off before on") }
            spans.append(Span(start: on, end: off))
        }
        do {
            return try UsageTrace(name: name, start: start, end: end, sessions: parsed, screenOn: spans)
        } catch {
            throw ReadError(description: "not a valid trace: \(error)")
        }
    }

    static func offset(_ instant: Instant, _ trace: UsageTrace) -> Int64 {
        instant.nanosecondsSinceEpoch - trace.start.nanosecondsSinceEpoch
    }

    /// A field quoted when it holds a comma, a quote or a line break (RFC 4180).
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + String(text.flatMap { $0 == "\"" ? ["\"", "\""] : [$0] }) + "\""
    }
}
