import Foundation
import OffstageCore
import OffstageSimulator

/// Shared fixtures: the real data found relative to this file, and short ways to write instants and spans.
enum TestSupport {
    /// `Data/app-usage/` at the root of the package.
    static let appUsageDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Data/app-usage")

    /// The real app-events file.
    static let appEvents = appUsageDirectory.appendingPathComponent("usagelogger_1user_app_events.csv")

    /// The real device-events file.
    static let deviceEvents = appUsageDirectory.appendingPathComponent("usagelogger_1user_device_events.csv")

    /// The origin of hand-made timelines.
    static let origin = Instant(secondsSinceEpoch: 1_767_225_600)
}

/// The instant `seconds` after the test origin.
func at(_ seconds: Double) -> Instant { TestSupport.origin + .seconds(double: seconds) }

/// The span from `start` to `end` seconds after the test origin.
func span(_ start: Double, _ end: Double) -> Span { Span(start: at(start), end: at(end)) }
