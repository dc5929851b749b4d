import Foundation
import OffstageProtocol

/// The plain-text layout of `offstage explain --history` (SPEC SCH-8): per identifier, its runs and what held it back,
/// so that "why did my task not run today" has an answer on a few lines.
extension Table {
    static func history(_ reply: ControlInterface.ExplainHistoryReply) -> String {
        let window = "since \(time(reply.from)) (\(span(reply.to - reply.from)))"
        guard !reply.tasks.isEmpty else {
            return "\(reply.app): nothing ran or waited \(window)"
                + (reply.to - reply.from > reply.keptSeconds ? "; history is kept for \(span(reply.keptSeconds))" : "")
        }
        var lines = ["\(reply.app), \(window):"]
        var overlapping = false
        for task in reply.tasks {
            lines.append("\(cell(task.identifier, limit: 120)) (\(task.kind))")
            if task.runs.isEmpty { lines.append("  did not run") }
            for run in task.runs { lines.append("  " + runLine(run)) }
            if task.waited > 0 {
                let held = task.held.map { "\($0.label) \(span($0.seconds))" }.joined(separator: ", ")
                lines.append("  waited \(span(task.waited)); held back: \(held)")
                if task.held.reduce(0, { $0 + $1.seconds }) > task.waited + 0.001 { overlapping = true }
            }
            if task.interrupted {
                lines.append("  (a wait was cut short by a daemon that stopped: counted until it was last known alive)")
            }
        }
        if overlapping {
            lines.append("each reason counts on its own: reasons that held a request at once add up to more than the time it waited")
        }
        if reply.to - reply.from > reply.keptSeconds {
            lines.append("history is kept for \(span(reply.keptSeconds)): older runs and waits are gone")
        }
        return lines.joined(separator: "\n")
    }

    /// `ran 2025-01-31 08:12:03 for 4 s (resumed, forced): expired (runtime), then completed: failed`.
    static func runLine(_ run: ControlInterface.RunHistoryMessage) -> String {
        let how = [run.start, run.forced ? "forced" : nil].compactMap { $0 }.joined(separator: ", ")
        guard let outcome = run.outcome else {
            return "running since \(time(run.startedAt)) (\(how)), for \(span(run.seconds)) so far"
        }
        var ended: String
        switch outcome {
        case "completed": ended = "completed"
        case "expired": ended = "expired (\(run.expiry ?? "?")), then completed"
        case "cancelled": ended = "cancelled by the user, then completed"
        case "cut-off": ended = "cut off: not completed after its expiration (\(run.expiry ?? "?"))"
        case "app-ended": ended = "the app ended while it ran"
        case "daemon-stopped": ended = "the daemon stopped while it ran"
        default: ended = cell(outcome)
        }
        if let result = run.result { ended += ": \(result)" }
        if let detail = run.detail { ended += " — \(cell(detail, limit: 200))" }
        return "ran \(time(run.startedAt)) for \(span(run.seconds)) (\(how)): \(ended)"
    }

    /// A duration for people: `2 h 0 min`, `10 min`, `4 min 5 s`, `42 s`, `1.5 s`, `< 0.1 s`.
    static func span(_ seconds: Double) -> String {
        if seconds > 0 && seconds < 0.05 { return "< 0.1 s" }
        if seconds < 10 {
            let tenths = (seconds * 10).rounded() / 10
            return tenths == tenths.rounded() ? "\(Int(tenths)) s" : "\(tenths) s"
        }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3_600 { return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3_600) h \(whole % 3_600 / 60) min"
    }
}
