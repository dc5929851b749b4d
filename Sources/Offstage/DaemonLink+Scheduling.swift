import OffstageProtocol

/// The `io.offstage.App` calls of scheduled background work (SPEC SCH-1..4).
extension DaemonLink {
    /// What the daemon said about a task identifier.
    enum Registration {
        /// The manifest lists it.
        case permitted
        /// The daemon refused it.
        case refused(TaskScheduler.Error)
        /// The daemon could not be asked; `reason` says why.
        case unverified(reason: String)
    }

    func registerTask(_ identifier: String) -> Registration {
        do {
            _ = try request(
                AppInterface.Method.registerTask, AppInterface.IdentifierParameters(identifier: identifier),
                as: EmptyReply.self)
            return .permitted
        } catch let error as VarlinkError {
            let refusal = TaskScheduler.Error(error)
            switch refusal.code {
            case .notPermitted, .invalidArgument: return .refused(refusal)
            case .unavailable, .tooManyPendingTaskRequests: return .unverified(reason: refusal.message)
            }
        } catch {
            return .unverified(reason: "\(error)")
        }
    }

    func submitTask(_ message: AppInterface.TaskRequestMessage) throws(TaskScheduler.Error) {
        do {
            _ = try request(AppInterface.Method.submitTask, AppInterface.SubmitParameters(request: message), as: EmptyReply.self)
        } catch let error as VarlinkError {
            throw TaskScheduler.Error(error)
        } catch {
            throw TaskScheduler.Error(unreachable: error)
        }
    }

    /// Whether a request was pending; nil when the daemon could not be asked.
    func cancelTask(_ identifier: String) -> Bool? {
        do {
            return try request(
                AppInterface.Method.cancelTask, AppInterface.IdentifierParameters(identifier: identifier),
                as: AppInterface.CancelReply.self
            ).cancelled
        } catch {
            reportToDeveloper("cancel(taskRequestWithIdentifier: \"\(identifier)\") failed: \(error)")
            return nil
        }
    }

    func cancelAllTasks() {
        do {
            _ = try request(AppInterface.Method.cancelAllTasks, NoParameters(), as: EmptyReply.self)
        } catch {
            reportToDeveloper("cancelAllTaskRequests() failed: \(error)")
        }
    }

    func pendingTasks() -> [AppInterface.TaskRequestMessage] {
        do {
            return try request(AppInterface.Method.pendingTasks, NoParameters(), as: AppInterface.PendingReply.self).requests
        } catch {
            reportToDeveloper("pendingTaskRequests() failed, returning none: \(error)")
            return []
        }
    }

    func setFetchInterval(_ parameters: AppInterface.FetchIntervalParameters) {
        do {
            _ = try request(AppInterface.Method.setFetchInterval, parameters, as: EmptyReply.self)
        } catch let error as VarlinkError {
            reportToDeveloper("setMinimumBackgroundFetchInterval failed: \(TaskScheduler.Error(error))")
        } catch {
            reportToDeveloper("setMinimumBackgroundFetchInterval failed: \(error)")
        }
    }

    func completeTask(run: UInt64, result: BackgroundTaskResult) {
        do {
            _ = try request(
                AppInterface.Method.completeTask, AppInterface.CompleteParameters(run: run, result: result.rawValue),
                as: EmptyReply.self)
        } catch {
            // A restarted daemon has forgotten the run: there is nothing left to complete.
            reportToDeveloper("could not report the completion of task run \(run): \(error)")
        }
    }

    /// Reports a continued-processing task's progress; false (with a line on standard error) when it could not.
    @discardableResult
    func reportTaskProgress(_ parameters: AppInterface.ProgressParameters) -> Bool {
        do {
            _ = try request(AppInterface.Method.reportTaskProgress, parameters, as: EmptyReply.self)
            return true
        } catch {
            reportToDeveloper("could not report the progress of task run \(parameters.run): \(error)")
            return false
        }
    }
}
