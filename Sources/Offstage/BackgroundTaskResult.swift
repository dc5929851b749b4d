/// How a piece of scheduled background work ended: what a ``BackgroundTask`` or a background fetch reports when
/// it completes, as `UIBackgroundFetchResult` on iOS.
///
/// The scheduler learns from it: an app that keeps reporting ``noData`` or ``failed`` is woken less often, one
/// that finds ``newData`` keeps its place.
public enum BackgroundTaskResult: String, Sendable, Hashable, CaseIterable {
    /// New content was downloaded.
    case newData
    /// The content was checked and nothing was new.
    case noData
    /// The work failed or was cut short.
    case failed
}

/// The result a background fetch completes with (``ApplicationDelegate/application(_:performFetchWithCompletionHandler:)``),
/// as `UIBackgroundFetchResult`. The same three cases as ``BackgroundTaskResult``.
public typealias BackgroundFetchResult = BackgroundTaskResult
