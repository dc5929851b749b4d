import Foundation
import OffstageProtocol

/// The `io.offstage.Transfers` calls (SPEC §5). Each blocks its thread for one round trip on the request connection;
/// a refusal, or a daemon that cannot be reached, is a ``BackgroundTransferError``.
extension DaemonLink {
    func openTransferSession(_ configuration: BackgroundSessionConfiguration) throws(BackgroundTransferError) {
        try transferCall(
            TransfersInterface.Method.openSession,
            TransfersInterface.OpenSessionParameters(
                identifier: configuration.identifier, discretionary: configuration.isDiscretionary,
                sendsLaunchEvents: configuration.sessionSendsLaunchEvents,
                allowsMeteredNetwork: configuration.allowsExpensiveNetworkAccess),
            as: EmptyReply.self)
    }

    func createTransfer(_ parameters: TransfersInterface.CreateTaskParameters) throws(BackgroundTransferError)
        -> TransfersInterface.TaskMessage
    {
        try transferCall(TransfersInterface.Method.createTask, parameters, as: TransfersInterface.CreateTaskReply.self).task
    }

    func transferTasks(session: String) throws(BackgroundTransferError) -> [TransfersInterface.TaskMessage] {
        try transferCall(
            TransfersInterface.Method.tasks, TransfersInterface.TasksParameters(session: session),
            as: TransfersInterface.TasksReply.self
        ).tasks
    }

    func acknowledgeTransfers(session: String, ids: [UInt64]) throws(BackgroundTransferError) {
        try transferCall(
            TransfersInterface.Method.acknowledge, TransfersInterface.AcknowledgeParameters(session: session, ids: ids),
            as: EmptyReply.self)
    }

    func changeTransfer(_ id: UInt64, _ change: String) throws(BackgroundTransferError) {
        try transferCall(
            TransfersInterface.Method.changeTask, TransfersInterface.ChangeTaskParameters(id: id, change: change),
            as: EmptyReply.self)
    }

    func completeTransferEvents(run: UInt64) throws(BackgroundTransferError) {
        try transferCall(
            TransfersInterface.Method.completeEvents, TransfersInterface.CompleteEventsParameters(run: run),
            as: EmptyReply.self)
    }

    @discardableResult
    private func transferCall<Parameters: Encodable, Reply: Decodable>(
        _ method: String, _ parameters: Parameters, as type: Reply.Type
    ) throws(BackgroundTransferError) -> Reply {
        do {
            return try request(method, parameters, as: type)
        } catch {
            throw BackgroundTransferError(refusal: error)
        }
    }
}
