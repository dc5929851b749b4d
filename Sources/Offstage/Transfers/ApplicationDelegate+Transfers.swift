import Foundation

/// The default handler of a background session's events: it completes at once. Sessions open in the process still
/// fetch and deliver the events.
extension ApplicationDelegate {
    /// Calls `completionHandler` at once.
    public func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @Sendable () -> Void
    ) {
        completionHandler()
    }
}
