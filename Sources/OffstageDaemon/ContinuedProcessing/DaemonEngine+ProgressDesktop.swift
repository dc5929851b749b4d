import Logging
import OffstageCore

/// Continued-processing tasks on the desktop (SPEC SCH-11): a progress notification per running task, updated in place,
/// with Open and Cancel; Cancel there cancels the task as `offstage cancel-task` does.
extension DaemonEngine {
    /// Carries out `.continuedProgress`.
    func showProgress(_ app: AppID, run: UInt64, _ view: ContinuedTaskView?) {
        guard let desktop = presentation.desktop else { return }
        guard let view else {
            if let id = progress.ended(run: run) { withdraw([id]) }
            return
        }
        guard let send = progress.update(app, run: run, view) else { return }
        notify(desktop, send)
    }

    /// What the desktop reported about a progress notification; false when the event is not about one.
    func progressDesktopEvent(_ event: NotificationDesktopEvent) -> Bool {
        switch event {
        case .shown(let token, let desktopID):
            guard progress.owns(token: token) else { return false }
            let (withdrawal, send) = progress.shown(token: token, desktopID: desktopID)
            if let withdrawal { withdraw([withdrawal]) }
            if let send, let desktop = presentation.desktop { notify(desktop, send) }
            return true
        case .failed(let token, let message):
            guard progress.owns(token: token) else { return false }
            progress.failed(token: token)
            logger.warning("the desktop did not show a task's progress", metadata: ["offstage.error": "\(message)"])
            return true
        case .clicked(let desktopID, let action):
            guard let (app, identifier) = progress.task(forDesktopID: desktopID) else { return false }
            userChose(action, on: app, identifier)
            return true
        case .closed(let desktopID, _):
            return progress.closed(desktopID: desktopID)
        case .disconnected:
            progress.disconnected()
            return false  // the notifications hear of it too
        }
    }

    private func notify(_ desktop: any NotificationDesktop, _ send: ProgressPresentation.Send) {
        do {
            try desktop.show(send.content, token: send.token)
        } catch {
            progress.failed(token: send.token)
            logger.debug("progress not shown on the desktop", metadata: ["offstage.error": "\(error)"])
        }
    }

    /// Cancel cancels the task; a click on the notification opens the app.
    private func userChose(_ action: String, on app: AppID, _ identifier: String) {
        do {
            if action == ProgressPresentation.cancelAction {
                let (message, actions) = try core.cancelContinuedTask(app, identifier: identifier, at: now)
                apply(actions)
                logger.notice("the user cancelled a task on the desktop: \(message)", metadata: ["offstage.app": "\(app)"])
            } else {
                apply(try core.open(app, at: now))
            }
        } catch {
            logger.notice("the desktop's \(action) on a task's progress did nothing: \(error)", metadata: ["offstage.app": "\(app)"])
        }
    }
}
