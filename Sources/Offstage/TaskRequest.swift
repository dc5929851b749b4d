import Foundation
import OffstageProtocol
import Synchronization

/// A request to run background work later, as `BGTaskRequest`: the base of ``AppRefreshTaskRequest`` and
/// ``ProcessingTaskRequest``, and what ``TaskScheduler/pendingTaskRequests()`` returns.
///
/// Like `BGTaskRequest` it is a class, so the familiar `let request = …; request.earliestBeginDate = …` works.
/// Its properties may be read and set from any thread.
public class TaskRequest: @unchecked Sendable, CustomStringConvertible {
    // Sendable by hand: the only mutable state is behind `fields`' lock.

    /// The identifier of the launch handler that runs the work; listed in the app's
    /// `BGTaskSchedulerPermittedIdentifiers`.
    public let identifier: String

    /// The wire kind: `refresh` or `processing`.
    let kind: String
    private let fields: Mutex<Fields>

    struct Fields {
        var earliestBeginDate: Date?
        var requiresNetworkConnectivity = false
        var requiresExternalPower = false
        var title = ""
        var subtitle = ""
        var strategy = ContinuedProcessingTaskRequest.SubmissionStrategy.queue
    }

    init(identifier: String, kind: String) {
        self.identifier = identifier
        self.kind = kind
        self.fields = Mutex(Fields())
    }

    /// Not before this date; nil (the default) lets the system run it as soon as it sees fit. The system may run
    /// it any time after this date, often much later.
    public var earliestBeginDate: Date? {
        get { fields.withLock { $0.earliestBeginDate } }
        set { fields.withLock { $0.earliestBeginDate = newValue } }
    }

    func withFields<Result>(_ body: (inout Fields) -> Result) -> Result {
        fields.withLock { body(&$0) }
    }

    /// The request as `SubmitTask` sends it.
    var message: AppInterface.TaskRequestMessage {
        let fields = withFields { $0 }
        let processing = kind == "processing"
        let continued = kind == "continued"
        return AppInterface.TaskRequestMessage(
            identifier: identifier, kind: kind, earliestBegin: fields.earliestBeginDate.map(WireTime.seconds),
            requiresNetwork: processing ? fields.requiresNetworkConnectivity : nil,
            requiresExternalPower: processing ? fields.requiresExternalPower : nil,
            title: continued ? fields.title : nil, subtitle: continued ? fields.subtitle : nil,
            strategy: continued ? fields.strategy.rawValue : nil)
    }

    /// The request a `PendingTasks` reply describes, or nil for a kind this SDK does not know.
    static func from(_ message: AppInterface.TaskRequestMessage) -> TaskRequest? {
        let request: TaskRequest
        switch message.kind {
        case "refresh":
            request = AppRefreshTaskRequest(identifier: message.identifier)
        case "processing":
            let processing = ProcessingTaskRequest(identifier: message.identifier)
            processing.requiresNetworkConnectivity = message.requiresNetwork ?? false
            processing.requiresExternalPower = message.requiresExternalPower ?? false
            request = processing
        case "continued":
            let continued = ContinuedProcessingTaskRequest(
                identifier: message.identifier, title: message.title ?? "", subtitle: message.subtitle ?? "")
            continued.strategy = message.strategy.flatMap(ContinuedProcessingTaskRequest.SubmissionStrategy.init) ?? .queue
            request = continued
        default:
            return nil
        }
        request.earliestBeginDate = message.earliestBegin.map(WireTime.date)
        return request
    }

    /// The type and the fields, e.g. `AppRefreshTaskRequest(identifier: "com.example.refresh", earliestBeginDate: …)`.
    public var description: String {
        let fields = withFields { $0 }
        var parts = ["identifier: \"\(identifier)\""]
        parts.append("earliestBeginDate: \(fields.earliestBeginDate.map { "\($0)" } ?? "nil")")
        if kind == "continued" {
            parts = ["identifier: \"\(identifier)\"", "title: \"\(fields.title)\"", "subtitle: \"\(fields.subtitle)\""]
            parts.append("strategy: .\(fields.strategy.rawValue)")
        }
        if kind == "processing" {
            parts.append("requiresNetworkConnectivity: \(fields.requiresNetworkConnectivity)")
            parts.append("requiresExternalPower: \(fields.requiresExternalPower)")
        }
        return "\(type(of: self))(\(parts.joined(separator: ", ")))"
    }
}
