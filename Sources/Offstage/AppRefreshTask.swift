/// A run of an ``AppRefreshTaskRequest``, as `BGAppRefreshTask`: about 30 s to fetch new content.
public final class AppRefreshTask: BackgroundTask, @unchecked Sendable {}
