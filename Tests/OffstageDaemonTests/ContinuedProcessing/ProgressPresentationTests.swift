import OffstageCore
@testable import OffstageDaemon
import Testing

/// A continued-processing task's progress on the desktop (SPEC SCH-11): one notification per task, updated in place,
/// one `Notify` in flight at a time with only the latest update waiting, taken off when the task ends.
@Suite("Continued processing: progress on the desktop")
struct ProgressPresentationTests {
    let app: AppID = "com.example.exporter"

    func view(_ completed: Int64, of total: Int64, _ state: ContinuedTaskView.State = .running, because: String? = nil)
        -> ContinuedTaskView
    {
        ContinuedTaskView(
            identifier: "com.example.export.1", state: state, title: "Exporting", subtitle: "Album", completed: completed,
            total: total, endedBecause: because)
    }

    @Test("SCH-11: the notification shows title, subtitle, progress and a bar, with Open and Cancel, and never expires; an ending task says why and has no Cancel")
    func content() {
        let running = ProgressPresentation.content(app, view(21, of: 50))
        #expect(running.summary == "Exporting" && running.body == "Album\n42 % (21 of 50)")
        #expect(running.progress == 42 && running.expireTimeout == 0 && running.key == "com.example.exporter/com.example.export.1")
        #expect(running.actions.map(\.identifier) == ["default", "cancel"])
        let ending = ProgressPresentation.content(app, view(21, of: 50, .ending, because: "cancelled by the user"))
        #expect(ending.body == "Album\nending: cancelled by the user" && ending.actions.map(\.identifier) == ["default"])
        let unknown = ProgressPresentation.content(app, view(3, of: 0))
        #expect(unknown.progress == 0 && unknown.body.hasSuffix("3 of ?"))
        // On the wire: a progress bar and the task's key, no notification key.
        let hints = FreedesktopNotificationDesktop.notification(running, escapingBody: false).hints
        #expect(hints["value"] == .int32(42) && hints["x-offstage-task"] == .string(running.key) && hints["x-offstage-key"] == nil)
    }

    @Test("SCH-11: updates while a Notify is unanswered wait, and only the latest goes out, replacing the shown one in place")
    func coalescesInFlight() throws {
        var presentation = ProgressPresentation()
        let sent = presentation.update(app, run: 7, view(1, of: 10))
        let first = try #require(sent)
        #expect(first.content.replacesID == 0)
        let waiting = [presentation.update(app, run: 7, view(2, of: 10)), presentation.update(app, run: 7, view(3, of: 10))]
        #expect(waiting == [nil, nil])
        let (withdraw, next) = presentation.shown(token: first.token, desktopID: 90)
        #expect(withdraw == nil)
        let latest = try #require(next)
        #expect(latest.content.replacesID == 90 && latest.content.body.hasSuffix("30 % (3 of 10)"))
        let answered = presentation.shown(token: latest.token, desktopID: 90)
        #expect(answered.withdraw == nil && answered.send == nil)
        let update = presentation.update(app, run: 7, view(4, of: 10))
        let later = try #require(update)
        #expect(later.content.replacesID == 90)
        #expect(presentation.task(forDesktopID: 90)?.identifier == "com.example.export.1")
    }

    @Test("SCH-11: a task that ends is taken off the desktop; one that ends before the desktop answered is taken off once it does")
    func endsAndWithdraws() throws {
        var presentation = ProgressPresentation()
        let update = presentation.update(app, run: 1, view(1, of: 2))
        let shown = try #require(update)
        _ = presentation.shown(token: shown.token, desktopID: 5)
        let ended = presentation.ended(run: 1)
        #expect(ended == 5)
        #expect(presentation.task(forDesktopID: 5) == nil)
        let second = presentation.update(app, run: 2, view(0, of: 2))
        let pending = try #require(second)
        let early = presentation.ended(run: 2)
        #expect(early == nil, "nothing on the desktop yet")
        let answer = presentation.shown(token: pending.token, desktopID: 6)
        #expect(answer.withdraw == 6 && answer.send == nil, "withdrawn once shown")
        #expect(presentation.items.isEmpty)
    }

    @Test("SCH-11: tokens are the presentation's own; a refusal forgets the in-flight Notify; a dismissal makes the next update a new notification")
    func failuresAndDismissals() throws {
        var presentation = ProgressPresentation()
        #expect(!presentation.owns(token: 1), "notification tokens count from 1; these never meet them")
        let first = presentation.update(app, run: 3, view(1, of: 4))
        let refused = try #require(first)
        #expect(presentation.owns(token: refused.token))
        presentation.failed(token: refused.token)
        let retry = presentation.update(app, run: 3, view(2, of: 4))
        let again = try #require(retry, "tried again with the next update")
        _ = presentation.shown(token: again.token, desktopID: 11)
        let closed = [presentation.closed(desktopID: 11), presentation.closed(desktopID: 12)]
        #expect(closed == [true, false])
        let fresh = presentation.update(app, run: 3, view(3, of: 4))
        #expect(fresh?.content.replacesID == 0)
    }
}
