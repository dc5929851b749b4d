import OffstageCore
import OffstageProtocol

/// `io.offstage.Control.ExplainHistory` (SPEC SCH-8, looking back): the core checks the question, the store answers
/// it on the writer thread, behind every record already handed to it, and the core's report sums it up.
extension DaemonEngine {
    /// The history window when the caller gives none: a day.
    static let defaultHistoryWindow: Double = 86_400

    func explainHistory(
        _ parameters: ControlInterface.ExplainHistoryParameters, responder: VarlinkResponder
    ) throws(VarlinkError) {
        let id = try appID(parameters.app)
        let now = now
        let since = try parameters.since.map { seconds throws(VarlinkError) in
            try VarlinkError.checking { () throws(NumberOutOfRange) in
                try CheckedNumber.instant(secondsSinceEpoch: seconds, field: "since")
            }
        } ?? now - .seconds(double: Self.defaultHistoryWindow)
        try query { () throws(CoreError) in
            try core.validateHistoryQuery(id, identifier: parameters.identifier, since: since, at: now)
        }
        let store = store
        let kept = store.historyBounds.maximumAge
        // The writer runs jobs in order: this read comes after every record handed to it so far.
        threadPool.runIfActive(eventLoop: eventLoop) { try store.history(of: id, from: since, to: now) }
            .whenComplete { [self] result in
                switch result {
                case .success(let stored):
                    let reports = TaskHistoryReport.reports(
                        waits: stored.waits, runs: stored.runs, identifier: parameters.identifier, from: since, to: now)
                    responder.reply(ControlInterface.ExplainHistoryReply(
                        app: id.rawValue, from: since.secondsSinceEpoch, to: now.secondsSinceEpoch, keptSeconds: kept,
                        tasks: reports.map { ControlInterface.TaskHistoryMessage($0, now: now) }))
                case .failure(let error):
                    responder.fail(failed("cannot read the history: \(error)", fix: "check the state folder \(paths.root)"))
                }
            }
    }
}
