import Foundation
import Logging
import OffstageCore

/// Background transfers in the daemon (SPEC §5): the core's decisions are journaled in the store, attempts run on
/// the ``TransferRunner``, and finished downloads are moved into their app's folder.
extension DaemonEngine {
    /// Where transfers keep their files, under the state directory.
    var transferPaths: TransferPaths { TransferPaths(root: paths.root) }

    /// Carries out one of the transfer queue's actions: journal writes first, in order (persist, then act).
    func performTransfer(_ action: TransferAction) {
        switch action {
        case .save, .saveSession, .deleteSession, .saveRelaunches:
            persist { try store.apply([action]) }
        case .delete(let task):
            persist { try store.apply([action]) }
            removeFiles(of: task)
        case .start(let task):
            transfers?.start(task, responseBodyLimit: core.transferLimits.maximumResponseBodyBytes)
        case .stop(let id, let attempt):
            transfers?.stop(id, attempt: attempt)
        case .handOver(let task):
            handOver(task)
        }
    }

    /// Moves a completed download's part file into the app's folder (an atomic rename: the file appears whole or not
    /// at all). The journal already says it completed, so a restart repeats a rename a crash cut short.
    func handOver(_ task: TransferTask) {
        let paths = transferPaths
        let part = paths.partFile(task)
        let destination = paths.handedOver(task)
        do {
            try FileManager.default.createDirectory(atPath: paths.handOverFolder(task.app), withIntermediateDirectories: true)
            guard rename(part, destination) == 0 else {
                if errno == ENOENT, FileManager.default.fileExists(atPath: destination) { return }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        } catch {
            logger.error(
                "cannot hand a finished download to its app",
                metadata: ["offstage.app": "\(task.app)", "offstage.transfer": "\(task.id)", "offstage.error": "\(error)"])
        }
    }

    /// Removes what the daemon kept for a task the app acknowledged or that went with its app: its part file, its
    /// upload's spooled file, and the handed-over file if the app left it where it was given.
    func removeFiles(of task: TransferTask) {
        let paths = transferPaths
        var files = [paths.partFile(task), paths.handedOver(task)]
        if let upload = task.request.uploadFile, upload.hasPrefix(paths.spool(task.app) + "/") { files.append(upload) }
        for file in files { unlink(file) }
    }

    /// Reads the journal back at start: tasks running when the daemon stopped wait again and resume from their
    /// checkpoints; completed downloads whose file was not yet handed over are handed over now.
    func readTransferJournal() throws -> [CoreAction] {
        let (journal, unreadable) = try store.loadTransfers()
        for name in unreadable {
            logger.error("transfer journal row cannot be read; it is left in the store", metadata: ["offstage.row": "\(name)"])
        }
        for task in journal.tasks where task.state == .completed && task.request.kind == .download {
            if FileManager.default.fileExists(atPath: transferPaths.partFile(task)) { handOver(task) }
        }
        return core.restoreTransfers(tasks: journal.tasks, sessions: journal.sessions, relaunches: journal.relaunches)
    }
}

extension DaemonEngine {
    /// A report of the transfer runner, on the loop: a checkpoint or an attempt's end, as a core input.
    func transferReported(_ report: TransferRunner.Report) {
        eventLoop.preconditionInEventLoop()
        switch report {
        case .progress(let id, let attempt, let bytesDone, let bytesExpected, let validator, let restarted, let gate):
            apply(core.transferProgress(id, attempt: attempt, bytesDone: bytesDone, bytesExpected: bytesExpected, validator: validator, restarted: restarted, at: now))
            // Journaled (or refused by the core as stale, or the store failed and said so): the download may go on.
            gate?.journaledNext()
        case .ended(let id, let attempt, let result):
            transfers?.ended(id, attempt: attempt)
            apply(core.transferEnded(id, attempt: attempt, result, at: now))
        }
    }
}
