import OffstageCore
import OffstageProtocol

extension AttachReport {
    /// The report an app's SDK attaches with, as the core takes it: an unknown state is `notRunning`, and continued
    /// tasks' progress is as of `now`, clamped at zero.
    public init(_ parameters: AppInterface.AttachParameters, at now: Instant) {
        self.init(
            launchCompleted: parameters.launchCompleted,
            state: ApplicationState(rawValue: parameters.state) ?? .notRunning,
            openTasks: parameters.openTasks.map { .init(id: BackgroundTaskID($0.id), name: $0.name) },
            continuedTasks: (parameters.continuedTasks ?? []).map {
                .init(
                    run: $0.run, identifier: $0.identifier,
                    progress: ContinuedProgress(
                        completed: max(0, $0.completed), total: max(0, $0.total), title: $0.title, subtitle: $0.subtitle,
                        reportedAt: now))
            })
    }
}
