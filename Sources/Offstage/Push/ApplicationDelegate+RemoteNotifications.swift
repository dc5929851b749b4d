import Foundation

/// The default remote-notification methods: registration results are written to standard error when they fail, and
/// the completion-handler form of the handler runs the async form, which reports no data.
extension ApplicationDelegate {
    /// Does nothing: the app that wants its token implements this, or awaits `registerForRemoteNotifications()`.
    public func application(
        _ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data
    ) {}

    /// Writes the error (what was wrong and the fix) to standard error.
    public func application(
        _ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error
    ) {
        reportToDeveloper(
            "registerForRemoteNotifications failed: \(error) (implement "
                + "application(_:didFailToRegisterForRemoteNotificationsWithError:) to handle it)")
    }

    /// Runs ``application(_:didReceiveRemoteNotification:)`` in a task on the main actor and completes with its
    /// result, or with `.failed` when it throws.
    public func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable],
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        let push = userInfo[RemoteNotification.apnsIDKey] as? String ?? "?"
        let work = Task { @MainActor in
            let result: BackgroundFetchResult
            do {
                result = try await self.application(application, didReceiveRemoteNotification: userInfo)
            } catch {
                reportToDeveloper(
                    "the remote-notification handler for push \(push) threw \(error): completing it as .failed")
                result = .failed
            }
            completionHandler(result)
        }
        RemoteNotificationRun.current?.attach(work)
    }

    /// Returns `.noData` at once: an app that declares `remote-notification` without a handler is woken for nothing
    /// (and is woken less often for it).
    public func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable]
    ) async throws -> BackgroundFetchResult {
        reportToDeveloper(
            "a background push arrived but the delegate implements neither "
                + "application(_:didReceiveRemoteNotification:) nor "
                + "application(_:didReceiveRemoteNotification:fetchCompletionHandler:): completing it with .noData")
        return .noData
    }
}
