/// A request to launch or resume the app in the background to refresh its content, as `BGAppRefreshTaskRequest`.
///
/// A refresh is short (about 30 s) and always needs a network; the app must declare the `fetch` background mode
/// and list the identifier in `BGTaskSchedulerPermittedIdentifiers`. The app has at most one pending refresh per
/// identifier: submitting another replaces it.
///
/// ```swift
/// let request = AppRefreshTaskRequest(identifier: "com.example.refresh")
/// request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
/// try TaskScheduler.shared.submit(request)
/// ```
public final class AppRefreshTaskRequest: TaskRequest, @unchecked Sendable {
    /// A refresh request for the launch handler registered for `identifier`.
    public init(identifier: String) {
        super.init(identifier: identifier, kind: "refresh")
    }
}
