/// The default background fetch: the completion-handler form runs the async form, which reports no data.
extension ApplicationDelegate {
    /// Runs ``applicationPerformFetch(_:)`` in a task on the main actor and completes with its result.
    public func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        let work = Task { @MainActor in
            completionHandler(await self.applicationPerformFetch(application))
        }
        FetchRun.current?.attach(work)
    }

    /// Returns `.noData` and writes a line to standard error naming the methods to implement.
    public func applicationPerformFetch(_ application: Application) async -> BackgroundFetchResult {
        reportToDeveloper(
            "a background fetch arrived but the delegate implements neither application(_:performFetchWithCompletionHandler:) "
                + "nor applicationPerformFetch(_:): completing it with .noData")
        return .noData
    }
}
