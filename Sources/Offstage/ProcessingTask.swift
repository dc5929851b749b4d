/// A run of a ``ProcessingTaskRequest``, as `BGProcessingTask`: minutes of deferrable work while the device is idle.
public final class ProcessingTask: BackgroundTask, @unchecked Sendable {}
