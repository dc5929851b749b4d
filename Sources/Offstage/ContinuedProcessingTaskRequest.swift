/// A request to continue work the user started in the foreground — an export, a sync — in the background, as
/// `BGContinuedProcessingTaskRequest` (SPEC SCH-11). The system shows its title, subtitle and progress to the user
/// (`offstage apps`, `offstage tasks`), who can cancel it.
///
/// Submit it while the app is in the foreground, in response to what the user did. It needs no background mode; list
/// the identifier, or a pattern covering it such as `com.example.photos.export.*`, in
/// `BGTaskSchedulerPermittedIdentifiers`, and register the launch handler for that pattern. Give each task an identifier
/// of its own under the pattern (`com.example.photos.export.\(UUID())`). It has no earliest begin date.
///
/// ```swift
/// let request = ContinuedProcessingTaskRequest(
///     identifier: "com.example.photos.export.\(album.id)", title: "Exporting \(album.name)", subtitle: "120 photos")
/// request.strategy = .fail  // or .queue (the default) to wait for a slot
/// try TaskScheduler.shared.submit(request)
/// ```
public final class ContinuedProcessingTaskRequest: TaskRequest, @unchecked Sendable {
    /// What happens when every slot for continued processing is taken at submission.
    public enum SubmissionStrategy: String, Sendable, CaseIterable {
        /// Wait in line for a slot (the default). Queued requests are dropped when the user force-quits the app.
        case queue
        /// Refuse the submission (``TaskScheduler/Error/Code/unavailable``) unless the task can start now.
        case fail
    }

    /// A request for the launch handler registered for `identifier` (or a pattern covering it), showing `title` and
    /// `subtitle` to the user.
    public init(identifier: String, title: String, subtitle: String = "") {
        super.init(identifier: identifier, kind: "continued")
        withFields {
            $0.title = title
            $0.subtitle = subtitle
        }
    }

    /// Shown to the user, e.g. "Exporting 120 photos". Must not be empty.
    public var title: String {
        get { withFields { $0.title } }
        set { withFields { $0.title = newValue } }
    }

    /// Shown under the title; may be empty.
    public var subtitle: String {
        get { withFields { $0.subtitle } }
        set { withFields { $0.subtitle = newValue } }
    }

    /// Queue (the default) or fail when no slot is free.
    public var strategy: SubmissionStrategy {
        get { withFields { $0.strategy } }
        set { withFields { $0.strategy = newValue } }
    }
}
