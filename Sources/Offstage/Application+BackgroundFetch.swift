import Foundation
import OffstageProtocol

/// The legacy background fetch (SPEC SCH-4), as on `UIApplication`.
extension Application {
    /// Fetch as often as the system allows, as `UIApplication.backgroundFetchIntervalMinimum`. Any interval of
    /// zero or less means the same.
    nonisolated public static let backgroundFetchIntervalMinimum: TimeInterval = 0

    /// Never fetch: the default, as `UIApplication.backgroundFetchIntervalNever`. `.infinity` means the
    /// same.
    nonisolated public static let backgroundFetchIntervalNever: TimeInterval = .greatestFiniteMagnitude

    /// Sets how often, at most, the system launches or resumes the app in the background to call
    /// ``ApplicationDelegate/application(_:performFetchWithCompletionHandler:)``.
    ///
    /// Pass ``backgroundFetchIntervalMinimum``, ``backgroundFetchIntervalNever`` (the default until the app sets
    /// one), or a number of seconds. The system decides when to fetch, and fetches less often for apps whose
    /// fetches find no new data. Any interval but never needs the `fetch` background mode in the manifest; when the
    /// daemon refuses the interval the reason and the fix are written to standard error. The daemon keeps the
    /// interval across launches. Safe to call from any thread.
    ///
    /// New code should prefer an ``AppRefreshTaskRequest``, as on iOS 13 and later.
    nonisolated public func setMinimumBackgroundFetchInterval(_ minimumBackgroundFetchInterval: TimeInterval) {
        guard let parameters = Self.fetchIntervalParameters(minimumBackgroundFetchInterval) else {
            reportToDeveloper(
                "setMinimumBackgroundFetchInterval(\(minimumBackgroundFetchInterval)) ignored: the interval is not a "
                    + "number; pass seconds, Application.backgroundFetchIntervalMinimum or .backgroundFetchIntervalNever")
            return
        }
        link.setFetchInterval(parameters)
    }

    /// The `SetFetchInterval` parameters for an interval, or nil for NaN.
    nonisolated static func fetchIntervalParameters(_ interval: TimeInterval) -> AppInterface.FetchIntervalParameters? {
        if interval.isNaN { return nil }
        if interval == backgroundFetchIntervalNever || interval == .infinity { return .init(interval: "never") }
        if interval <= backgroundFetchIntervalMinimum { return .init(interval: "minimum") }
        return .init(interval: "seconds", seconds: interval)
    }
}
