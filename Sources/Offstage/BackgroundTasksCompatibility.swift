// The names of Apple's BackgroundTasks framework, so that iOS code ports with few changes. Offstage's own names
// are the documented ones; these are plain aliases.

/// `BGTaskScheduler`: see ``TaskScheduler``.
public typealias BGTaskScheduler = TaskScheduler
/// `BGTaskRequest`: see ``TaskRequest``.
public typealias BGTaskRequest = TaskRequest
/// `BGAppRefreshTaskRequest`: see ``AppRefreshTaskRequest``.
public typealias BGAppRefreshTaskRequest = AppRefreshTaskRequest
/// `BGProcessingTaskRequest`: see ``ProcessingTaskRequest``.
public typealias BGProcessingTaskRequest = ProcessingTaskRequest
/// `BGTask`: see ``BackgroundTask``.
public typealias BGTask = BackgroundTask
/// `BGAppRefreshTask`: see ``AppRefreshTask``.
public typealias BGAppRefreshTask = AppRefreshTask
/// `BGProcessingTask`: see ``ProcessingTask``.
public typealias BGProcessingTask = ProcessingTask
