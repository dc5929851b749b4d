import Foundation
import OffstageProtocol

/// What must hold of the notification app's notifications after every restart and at the end (SPEC NT-1, NT-2, §11),
/// read from `io.offstage.NotificationsControl.Notifications` (the delivered list, kept whole by the harness's
/// `maximumDeliveredNotificationsPerApp`, and the pending list):
///
/// - a one-shot request whose `Add` was acknowledged is pending (not long past its due time) or delivered exactly
///   once, at the due time the reply gave; at the end, after every due time has passed, it is delivered (else LOST);
///   two deliveries of it are DUPLICATED;
/// - a request cut off by a kill is delivered at most once; one never sent, or refused, is never delivered;
/// - a repeating request has at most one delivery per time of its schedule (`first + k·interval`), at those times
///   only, with no time skipped except after a firing marked late, which skips to the first time after it (times
///   missed while the daemon was down fire once), and stays pending at its next time;
/// - nothing is pending more than ``overdueGrace`` after its due time when checked after a restart;
/// - a delivery is marked late exactly when it came more than the lateness allowance after its due time, and never
///   before its due time.
enum NotificationChecks {
    /// A request still pending this long after its due time, checked after a restart, is overdue.
    static let overdueGrace = 2.0
    /// The daemon's `notificationLateAfter` (its default; the harness does not change it).
    static let lateAfter = 1.0
    /// Slack for comparing times that crossed the wire as floats (whole milliseconds on the daemon's side).
    static let slack = 0.0015
}

extension HarnessDaemon {
    /// The app's pending and delivered notifications, as the user's `offstage notifications APP` sees them.
    func notifications(app: String) throws -> NotificationsControlInterface.NotificationsReply {
        // Long runs deliver thousands of notifications, kept whole: more than the default 1 MB reply.
        let connection = try VarlinkConnection(path: socket, maximumMessageSize: 256 << 20)
        defer { connection.close() }
        return try connection.call(
            NotificationsControlInterface.Method.notifications,
            NotificationsControlInterface.NotificationsParameters(app: app),
            as: NotificationsControlInterface.NotificationsReply.self, timeout: .seconds(30))
    }
}

extension CrashRun {
    /// Reports a problem once, however many checks see it again.
    func problem(_ key: String, _ text: String) {
        guard notifications.reported.insert(key).inserted else { return }
        violation(text)
    }

    /// Checks the notification app's notifications against the ledger; `final` (every one-shot due time has passed)
    /// also requires every acknowledged one-shot request delivered, and fills in the run's figures.
    func checkNotifications(final: Bool) throws {
        let app = HarnessApp.alarm.id
        let reply = try daemon.notifications(app: app)
        let now = Date().timeIntervalSince1970
        var records: [String: [NotificationsControlInterface.AppDeliveredMessage]] = [:]
        for record in reply.delivered where record.app == app && record.request.identifier != "alarm" {
            records[record.request.identifier, default: []].append(record)
        }
        var pending: [String: NotificationsControlInterface.AppPendingMessage] = [:]
        for entry in reply.pending where entry.app == app && entry.request.identifier != "alarm" {
            if pending[entry.request.identifier] != nil {
                problem("pending-twice/\(entry.request.identifier)", "\(entry.request.identifier) is pending twice")
            }
            pending[entry.request.identifier] = entry
        }
        for identifier in Set(records.keys).union(pending.keys) where notifications.tracked[identifier] == nil {
            problem("unknown/\(identifier)", "notification \(identifier), which the harness never asked for, is listed")
        }
        var figures = report.notifications
        // When the daemon was down: from each kill to the first answer after it.
        let down: [(from: Double, to: Double)] = daemon.killTimes.map { kill in
            (kill, daemon.answerTimes.first { $0 > kill } ?? .infinity)
        }
        /// Whether the wait from due time to delivery crossed a time the daemon was down (it was due while the
        /// daemon was down, or just before a kill that came before the daemon fired it).
        func crossedDown(_ record: NotificationsControlInterface.AppDeliveredMessage) -> Bool {
            down.contains { record.due <= $0.to && record.deliveredAt >= $0.from }
        }
        for identifier in notifications.order {
            guard let entry = notifications.tracked[identifier] else { continue }
            let mine = (records[identifier] ?? []).sorted { $0.due < $1.due }
            let waiting = pending[identifier]
            for record in mine { checkTiming(identifier, record) }
            switch entry.outcome {
            case .neverSent, .refused:
                if !mine.isEmpty || waiting != nil {
                    problem(
                        "ghost/\(identifier)",
                        "\(identifier) was never added (\(entry.outcome)) but is \(mine.isEmpty ? "pending" : "delivered")")
                }
            case .acknowledged, .uncertain:
                if let step = entry.step {
                    checkRepeating(entry, step: step, mine, waiting, now: now, final: final, figures: &figures)
                } else {
                    checkOneShot(entry, mine, waiting, now: now, final: final)
                }
                if final {
                    figures.fired += mine.count
                    if entry.step == nil { figures.firedOneShot += mine.count } else { figures.firedRepeating += mine.count }
                    if entry.outcome == .uncertain, !mine.isEmpty { figures.uncertainFired += 1 }
                    for record in mine {
                        if record.late { figures.late += 1 }
                        if crossedDown(record) {
                            figures.acrossRestart += 1
                            if record.late { figures.lateAcrossRestart += 1 }
                        } else {
                            let delay = record.deliveredAt - record.due
                            figures.delaysWhileUp.append(delay)
                            if delay > (figures.slowest?.delay ?? -1) {
                                figures.slowest = (record.request.identifier, record.due, delay)
                            }
                        }
                        if record.route == "app" { figures.awaitingApp += 1 }
                    }
                }
            }
        }
        guard final else { return }
        // Where the kills fell against the due times of everything that fired or is pending.
        var dueCounts: [Double: Int] = [:]
        for list in records.values { for record in list { dueCounts[record.due, default: 0] += 1 } }
        for entry in pending.values { dueCounts[entry.due, default: 0] += 1 }
        let dues = dueCounts.keys.sorted()
        let bursts = dueCounts.filter { $0.value >= 3 }.keys.sorted()
        func nearest(_ time: Double, in list: [Double]) -> Double? {
            var low = 0
            var high = list.count
            while low < high {
                let middle = (low + high) / 2
                if list[middle] < time { low = middle + 1 } else { high = middle }
            }
            return [low - 1, low].filter { list.indices.contains($0) }.map { abs(list[$0] - time) }.min()
        }
        for kill in daemon.killTimes {
            if let distance = nearest(kill, in: dues) {
                if distance <= 0.005 { figures.killsWithin5ms += 1 }
                if distance <= 0.050 { figures.killsWithin50ms += 1 }
            }
            // During a burst: from just before its due time to 10 ms after (one transaction, then the desktop).
            if bursts.contains(where: { kill >= $0 - 0.001 && kill <= $0 + 0.010 }) { figures.killsInBurst += 1 }
        }
        figures.burstDues = bursts.count
        figures.lost = notifications.lost.count
        figures.duplicated = notifications.duplicated.count
        figures.overdue = notifications.overdue.count
        figures.wrongLate = notifications.wrongLate.count
        figures.wrongDue = notifications.wrongDue.count
        report.notifications = figures
    }

    /// Not delivered before its due time; late exactly when more than the allowance after it.
    func checkTiming(_ identifier: String, _ record: NotificationsControlInterface.AppDeliveredMessage) {
        let delay = record.deliveredAt - record.due
        if delay < -NotificationChecks.slack {
            problem(
                "early/\(identifier)/\(instant(record.due))",
                "\(identifier) (due \(instant(record.due))) was delivered \(milliseconds(-delay)) ms before its due time")
        }
        let shouldBeLate = delay > NotificationChecks.lateAfter
        if record.late != shouldBeLate, abs(delay - NotificationChecks.lateAfter) > NotificationChecks.slack {
            notifications.wrongLate.insert(identifier)
            problem(
                "late/\(identifier)/\(instant(record.due))",
                "\(identifier) (due \(instant(record.due))) was delivered \(milliseconds(delay)) ms after its due time but is "
                    + (record.late ? "marked late" : "not marked late"))
        }
        if record.route != "user" && record.route != "app" {
            problem("route/\(identifier)/\(instant(record.due))", "\(identifier) has route \(record.route)")
        }
    }

    /// A one-shot request: delivered at most once, at its acknowledged due time; pending only until shortly after it.
    func checkOneShot(
        _ entry: NotificationLedger.Tracked, _ mine: [NotificationsControlInterface.AppDeliveredMessage],
        _ waiting: NotificationsControlInterface.AppPendingMessage?, now: Double, final: Bool
    ) {
        let identifier = entry.identifier
        let acknowledged = entry.outcome == .acknowledged
        if mine.count > 1 {
            notifications.duplicated.insert(identifier)
            problem(
                "duplicated/\(identifier)",
                "DUPLICATED \(identifier) (\(entry.outcome)): \(mine.count) deliveries, due "
                    + mine.map { "\(instant($0.due)) at \(instant($0.deliveredAt))" }.joined(separator: ", "))
        }
        if !mine.isEmpty, let waiting {
            problem("both/\(identifier)", "\(identifier) was delivered and is still pending, due \(instant(waiting.due))")
        }
        if acknowledged, let due = entry.due {
            for record in mine where abs(record.due - due) > NotificationChecks.slack {
                notifications.wrongDue.insert(identifier)
                problem("due/\(identifier)", "\(identifier) fired with due \(instant(record.due)); the Add reply said \(instant(due))")
            }
            if let waiting, abs(waiting.due - due) > NotificationChecks.slack {
                notifications.wrongDue.insert(identifier)
                problem("due/\(identifier)", "\(identifier) is pending for \(instant(waiting.due)); the Add reply said \(instant(due))")
            }
        }
        if let waiting, waiting.due < now - NotificationChecks.overdueGrace {
            notifications.overdue.insert(identifier)
            problem(
                "overdue/\(identifier)",
                "\(identifier) is still pending \(milliseconds(now - waiting.due)) ms after its due time \(instant(waiting.due))")
        }
        if acknowledged, mine.isEmpty, waiting == nil {
            notifications.lost.insert(identifier)
            problem("lost/\(identifier)", "LOST \(identifier): acknowledged (due \(instant(entry.due ?? 0))), neither pending nor delivered")
        } else if acknowledged, final, mine.isEmpty {
            notifications.lost.insert(identifier)
            problem("lost/\(identifier)", "LOST \(identifier): acknowledged (due \(instant(entry.due ?? 0))), still not delivered at the end")
        }
    }

    /// A repeating time-interval request: one delivery per time of its schedule at most, no time skipped but after a
    /// late firing, and always pending at its next time.
    func checkRepeating(
        _ entry: NotificationLedger.Tracked, step: Double, _ mine: [NotificationsControlInterface.AppDeliveredMessage],
        _ waiting: NotificationsControlInterface.AppPendingMessage?, now: Double, final: Bool,
        figures: inout NotificationFigures
    ) {
        let identifier = entry.identifier
        var first = entry.firstDue
        if first == nil, let waiting {
            // Cut off by a kill, it was added after all: its first time is a whole millisecond, one interval after it.
            first = ((waiting.addedAt + step) * 1000).rounded(.up) / 1000
            notifications.tracked[identifier]?.firstDue = first
        }
        if waiting == nil, entry.outcome == .acknowledged || !mine.isEmpty {
            notifications.lost.insert(identifier)
            problem(
                "lost/\(identifier)",
                "LOST \(identifier): a repeating request (every \(Int(step)) s), \(entry.outcome), is no longer pending "
                    + "after \(mine.count) deliveries")
        }
        guard let first else { return }
        func slot(_ due: Double) -> (index: Int, off: Double) {
            let index = ((due - first) / step).rounded()
            return (Int(index), due - (first + index * step))
        }
        var previous: (index: Int, record: NotificationsControlInterface.AppDeliveredMessage)?
        /// Whether time `index` may follow the delivery `before` (its next, or the first after a late firing).
        func follows(_ index: Int, _ before: (index: Int, record: NotificationsControlInterface.AppDeliveredMessage)) -> Bool {
            if index == before.index + 1 { return true }
            guard index > before.index + 1, before.record.late else { return false }
            let firedAt = before.record.deliveredAt
            return first + Double(index - 1) * step <= firedAt + NotificationChecks.slack
                && first + Double(index) * step > firedAt - NotificationChecks.slack
        }
        for record in mine {
            let (index, off) = slot(record.due)
            if abs(off) > NotificationChecks.slack || index < 0 {
                notifications.wrongDue.insert(identifier)
                problem(
                    "schedule/\(identifier)/\(instant(record.due))",
                    "\(identifier) fired for due \(instant(record.due)), off its schedule (first \(instant(first)), every \(step) s) by "
                        + "\(milliseconds(off)) ms")
            }
            if let before = previous {
                if index == before.index {
                    notifications.duplicated.insert(identifier)
                    problem(
                        "duplicated/\(identifier)/\(index)",
                        "DUPLICATED \(identifier): two deliveries for its time \(index) (due \(instant(before.record.due)) and \(instant(record.due)))")
                } else if !follows(index, before) {
                    notifications.lost.insert(identifier)
                    problem(
                        "gap/\(identifier)/\(before.index)",
                        "LOST repeats of \(identifier): delivered for due \(instant(before.record.due)) (late: \(before.record.late), "
                            + "at \(instant(before.record.deliveredAt))), next for due \(instant(record.due)); times between are missing")
                } else if index > before.index + 1 {
                    if final { figures.coalesced += index - before.index - 1 }
                }
            }
            previous = (index, record)
        }
        guard let waiting else { return }
        let (index, off) = slot(waiting.due)
        if abs(off) > NotificationChecks.slack {
            notifications.wrongDue.insert(identifier)
            problem(
                "schedule/\(identifier)/\(instant(waiting.due))",
                "\(identifier) is pending for \(instant(waiting.due)), off its schedule (first \(instant(first)), every \(step) s)")
        }
        if let before = previous {
            if index <= before.index {
                notifications.duplicated.insert(identifier)
                problem(
                    "repending/\(identifier)/\(index)",
                    "\(identifier) is pending again for its time \(index) (due \(instant(waiting.due))), already delivered")
            } else if !follows(index, before) {
                notifications.lost.insert(identifier)
                problem(
                    "gap/\(identifier)/\(before.index)",
                    "LOST repeats of \(identifier): delivered for due \(instant(before.record.due)) (late: \(before.record.late), "
                        + "at \(instant(before.record.deliveredAt))), now pending for \(instant(waiting.due)); times between are missing")
            }
        } else if index != 0 {
            notifications.lost.insert(identifier)
            problem("gap/\(identifier)/start", "\(identifier) never fired, and is pending for its time \(index) (due \(instant(waiting.due)))")
        }
        if waiting.due < now - NotificationChecks.overdueGrace {
            notifications.overdue.insert(identifier)
            problem(
                "overdue/\(identifier)/\(instant(waiting.due))",
                "\(identifier) is still pending \(milliseconds(now - waiting.due)) ms after its due time \(instant(waiting.due))")
        }
    }
}

func milliseconds(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }

/// An instant as seconds since the epoch, to the millisecond.
func instant(_ seconds: Double) -> String { String(format: "%.3f", seconds) }
