import Foundation
import OffstageCore

/// Renders the benchmark's results as an aligned plain-text table: text columns left-aligned, numbers
/// right-aligned, a dash where a value does not apply.
///
/// ```
/// policy          knob    wake-ups/day  energy J/day  fresh  median age  p90 age  missed
/// --------------  ------  ------------  ------------  -----  ----------  -------  ------
/// fixed interval  15 min          96.0         412.3  81.2%      6m 12s  13m 30s       –
/// ```
public enum PolicyTable {
    /// One row: one policy at one knob value.
    public struct Row: Hashable, Sendable {
        /// The policy's name.
        public var policy: String
        /// The knob's value, as it should read.
        public var knob: String
        /// Device wake-ups per day.
        public var wakeUpsPerDay: Double
        /// Background energy per day, in joules.
        public var energyJoulesPerDay: Double
        /// The share of fresh opens, 0 … 1.
        public var freshShare: Double
        /// The median age of content at open.
        public var medianAge: Duration?
        /// The 90th percentile of the age of content at open.
        public var p90Age: Duration?
        /// Opens whose refresh window was empty (the oracle's count), if the policy has such a notion.
        public var missedWindows: Int?

        /// Creates a row.
        public init(
            policy: String, knob: String, wakeUpsPerDay: Double, energyJoulesPerDay: Double, freshShare: Double,
            medianAge: Duration?, p90Age: Duration?, missedWindows: Int? = nil
        ) {
            self.policy = policy
            self.knob = knob
            self.wakeUpsPerDay = wakeUpsPerDay
            self.energyJoulesPerDay = energyJoulesPerDay
            self.freshShare = freshShare
            self.medianAge = medianAge
            self.p90Age = p90Age
            self.missedWindows = missedWindows
        }
    }

    static let headers = ["policy", "knob", "wake-ups/day", "energy J/day", "fresh", "median age", "p90 age", "missed"]
    static let rightAligned: Set<Int> = [2, 3, 4, 5, 6, 7]

    /// The table for `rows`, in the given order, ending with a line break.
    public static func render(_ rows: [Row]) -> String {
        let cells = rows.map { row in
            [
                row.policy, row.knob, String(format: "%.1f", row.wakeUpsPerDay),
                String(format: "%.1f", row.energyJoulesPerDay), String(format: "%.1f%%", row.freshShare * 100),
                age(row.medianAge), age(row.p90Age), row.missedWindows.map(String.init) ?? "–",
            ]
        }
        let widths = headers.indices.map { column in
            ([headers[column]] + cells.map { $0[column] }).map(\.count).max() ?? 0
        }
        func line(_ fields: [String]) -> String {
            fields.enumerated().map { column, field in
                let padding = String(repeating: " ", count: widths[column] - field.count)
                return rightAligned.contains(column) ? padding + field : field + padding
            }
            .joined(separator: "  ")
            .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        var lines = [line(headers), line(widths.map { String(repeating: "-", count: $0) })]
        lines += cells.map(line)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A duration as people read it: `4.2s`, `42s`, `3m 20s`, `2h 05m`, `1d 03h`; a dash for nil.
    public static func age(_ duration: Duration?) -> String {
        guard let duration else { return "–" }
        let seconds = duration.inSeconds
        if seconds < 10 { return String(format: "%.1fs", seconds) }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m \(String(format: "%02d", whole % 60))s" }
        if whole < 86_400 { return "\(whole / 3600)h \(String(format: "%02d", whole % 3600 / 60))m" }
        return "\(whole / 86_400)d \(String(format: "%02d", whole % 86_400 / 3600))h"
    }
}
