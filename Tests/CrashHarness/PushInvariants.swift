import Foundation
import OffstageProtocol

/// What must hold of pushes after every restart and at the end (SPEC NT-3..5, §11: "nothing acknowledged with 200 is
/// ever lost, nothing delivered twice"), read from the daemon's push records (`offstage push-status --json`), the
/// Messenger's handler lines (`messenger: received push ID` in its output, one write per hand-off, appended by the
/// system to the app's log, so a kill of the daemon loses none), the daemon's log and the Messenger's delivered
/// notifications.
///
/// **Stored.** The store has one row per `apns-id` (its primary key): a push is stored once or not at all.
/// - A push answered 200 (on any attempt) has a record after every restart (else it is LOST), and at the end, after a
///   final restart and a quiet period, that record is done with exactly one final outcome: handled, shown, coalesced,
///   expired, cut-off or not-delivered (else it is LOST: acknowledged and never finished).
/// - A push never answered 200 but cut off by a kill on some attempt may or may not have a record; if it has one, it
///   is finished at the end like any other.
/// - A push every attempt of which was refused, or that the harness never sent, has no record.
///
/// **Delivered twice.** The inbox marks a push `handed` in the store before the remote-notification callback leaves
/// the daemon (persist, then act), and a start reads every `handed` row back as cut off ("the daemon stopped while its
/// handler ran") without handing it in again; rows still `accepted` were never handed and are handed in at start; a
/// retry of an `apns-id` already stored is answered 200 and not handed in. So a cut-off does not license a second
/// hand-off: "delivered twice" means the handler was given the same `apns-id` twice (two lines), whatever kills
/// happened, and it is never allowed. What a kill may do is cut a hand-off short: a push recorded cut-off was given
/// to the handler once or not at all (marked handed, then the daemon was killed before the callback reached the app).
/// In full, for each `apns-id`, with n the handler's lines for it:
/// - n ≤ 1, always;
/// - n = 1 only for a push whose record is `handed` (the handler runs now), or done as handled or cut-off;
/// - done as handled: n = 1 (the line is written before the handler completes);
/// - done as shown, coalesced, expired or not-delivered: n = 0 (the handler was never called).
///
/// **Shown twice.** An alert is shown (to the user, or to the app in front) at most once: the daemon logs each
/// showing ("push ID delivered to the user", "… to the app (will-present)"), and a push handed in again after a
/// restart finds its alert in the delivered list and shows nothing. At the end: at most one such entry per push; the
/// delivered list holds, for each collapse id, the alert of the newest push with that id that was shown (an older
/// one shown again after a restart would have replaced it), and for each shown alert without one, its own alert.
extension CrashRun {
    func pushProblem(_ key: String, _ text: String) {
        guard pushes.reported.insert(key).inserted else { return }
        violation(text)
    }

    /// How many times the Messenger's handler was given each push, from its output.
    func handlerCalls() -> [String: Int] {
        let log = (try? String(contentsOfFile: daemon.state + "/logs/\(HarnessApp.messenger.id).log", encoding: .utf8)) ?? ""
        var calls: [String: Int] = [:]
        let marker = "messenger: received push "
        // Whole lines only: the app may be writing the last one as it is read.
        var lines = log.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        for line in lines where line.hasPrefix(marker) {
            calls[String(line.dropFirst(marker.count)), default: 0] += 1
        }
        return calls
    }

    /// Waits until no push is waiting in the inbox (held, accepted or handed), up to `seconds`; returns how long it took.
    func settlePushes(seconds: Double) throws -> Double {
        let started = Date()
        while Date().timeIntervalSince(started) < seconds {
            if try pushStatus().stored == 0 { break }
            usleep(100_000)
        }
        return Date().timeIntervalSince(started)
    }

    /// Checks the push records and the handler's calls against the ledger; `final` (after the quiet period) also
    /// requires every stored push finished, checks the alerts shown, and fills in the run's figures.
    func checkPushes(final: Bool) throws {
        guard pushServer != nil else { return }
        // The handler's lines before and after the records: a line read before was written after its push was
        // marked handed (persist, then act), so the records show it handed or done; a push the records show done
        // was given to the handler before, so the lines read after show it. (Read once, a push handed in or
        // completed between the two reads would look wrong.)
        let callsBefore = handlerCalls()
        let status = try pushStatus()
        let calls = handlerCalls()
        var records: [String: PushControlInterface.RecordMessage] = [:]
        for record in status.records {
            if records.updateValue(record, forKey: record.id) != nil {
                pushes.duplicated.insert(record.id)
                pushProblem("stored-twice/\(record.id)", "DUPLICATED push \(record.id): two records")
            }
        }
        for (id, record) in records {
            guard let entry = pushes.tracked[id] else {
                pushes.ghosts.insert(id)
                pushProblem("unknown/\(id)", "push \(id), which the harness never sent, has a record (\(record.state))")
                continue
            }
            if entry.refusedOnly || entry.attempts.isEmpty {
                pushes.ghosts.insert(id)
                pushProblem(
                    "ghost/\(id)", "push \(id) was \(entry.attempts.isEmpty ? "never sent" : "refused at every attempt") but has a record")
            }
            if record.app != HarnessApp.messenger.id {
                pushProblem("app/\(id)", "push \(id) is recorded for \(record.app)")
            }
        }
        // Requests cut by the last kill, before any retry: whether the gateway had stored them.
        for id in pushes.cutSinceLastCheck {
            if records[id] != nil { report.pushes.cutStored += 1 } else { report.pushes.cutNotStored += 1 }
        }
        pushes.cutSinceLastCheck = []
        for id in Set(calls.keys).subtracting(pushes.tracked.keys) {
            pushProblem("unknown-call/\(id)", "the handler was given \(id), which the harness never sent")
        }
        for id in pushes.order {
            guard let entry = pushes.tracked[id] else { continue }
            let record = records[id]
            let given = calls[id] ?? 0
            let givenBefore = callsBefore[id] ?? 0
            let what = "push \(id) (\(entry.push.kind.rawValue)\(entry.push.collapseID.map { ", collapse id \($0)" } ?? ""), cycle \(entry.cycle))"
            if given > 1 {
                pushes.duplicated.insert(id)
                pushProblem("duplicated/\(id)", "DUPLICATED \(what): its handler was given it \(given) times; record: \(describe(record))")
            }
            if entry.acknowledged, record == nil {
                pushes.lost.insert(id)
                pushProblem("lost/\(id)", "LOST \(what): answered 200, no record")
            }
            if givenBefore > 0 {
                guard let record else {
                    pushProblem("called-unstored/\(id)", "\(what): its handler was given it, but it has no record")
                    continue
                }
                let allowed = record.state == "handed" || (record.state == "done" && ["handled", "cut-off"].contains(record.outcome ?? ""))
                if !allowed {
                    pushes.wrongOutcome.insert(id)
                    pushProblem("called/\(id)", "\(what): its handler was given it, but its record is \(describe(record))")
                }
            }
            if let record, record.state == "done" {
                switch record.outcome ?? "" {
                case "handled":
                    if given != 1 {
                        pushes.wrongOutcome.insert(id)
                        pushProblem("handled/\(id)", "\(what) is recorded handled, but its handler was given it \(given) times")
                    }
                case "shown", "coalesced", "expired", "not-delivered":
                    if given != 0 {
                        pushes.wrongOutcome.insert(id)
                        pushProblem("not-called/\(id)", "\(what) is recorded \(describe(record)), but its handler was given it")
                    }
                case "cut-off":
                    break
                default:
                    pushes.wrongOutcome.insert(id)
                    pushProblem("outcome/\(id)", "\(what) is done with no known outcome: \(describe(record))")
                }
            }
            if final, let record, record.state != "done" {
                if entry.acknowledged { pushes.lost.insert(id) }
                pushProblem(
                    "unfinished/\(id)",
                    "\(entry.acknowledged ? "LOST " : "")\(what): \(entry.acknowledged ? "answered 200, " : "")still \(record.state) at the end")
            }
        }
        guard final else { return }
        try checkAlertsShown(records)
        var figures = report.pushes
        figures.acknowledged = pushes.order.filter { pushes.tracked[$0]?.acknowledged == true }.count
        figures.uncertain = pushes.uncertain.count
        figures.uncertainStored = pushes.uncertain.filter { records[$0] != nil }.count
        figures.outcomes = [:]
        figures.notDelivered = [:]
        for record in records.values {
            figures.outcomes[record.outcome ?? record.state, default: 0] += 1
            if record.outcome == "not-delivered" { figures.notDelivered[record.detail ?? "?", default: 0] += 1 }
        }
        figures.handlerCalls = calls.values.reduce(0, +)
        figures.cutOffByKill = records.values.filter { $0.outcome == "cut-off" && $0.detail?.contains("daemon stopped") == true }.count
        figures.lost = pushes.lost.count
        figures.duplicated = pushes.duplicated.count
        figures.shownTwice = pushes.shownTwice.count
        figures.ghosts = pushes.ghosts.count
        figures.wrongOutcome = pushes.wrongOutcome.count
        report.pushes = figures
    }

    func describe(_ record: PushControlInterface.RecordMessage?) -> String {
        guard let record else { return "none" }
        return record.state + (record.outcome.map { " " + $0 } ?? "") + (record.detail.map { " (\($0))" } ?? "")
    }

    /// Alerts shown at most once: one log entry of their showing at most, and the delivered list as the newest
    /// showings left it.
    func checkAlertsShown(_ records: [String: PushControlInterface.RecordMessage]) throws {
        let app = HarnessApp.messenger.id
        let log = try daemon.json(["log", "--app", app, "--limit", "1000000"], as: [ControlInterface.LogLine].self)
        var showings: [String: Int] = [:]
        for line in log {
            for marker in [" delivered to the user", " delivered to the app (will-present)"] where line.message.hasSuffix(marker) {
                let words = line.message.dropLast(marker.count).split(separator: " ")
                if words.count == 2, words[0] == "push" { showings[String(words[1]), default: 0] += 1 }
            }
        }
        for (id, count) in showings where count > 1 {
            pushes.shownTwice.insert(id)
            pushProblem("shown-twice/\(id)", "ALERT SHOWN TWICE: push \(id) was shown \(count) times (the daemon's log)")
        }
        report.pushes.shown = showings.count
        let delivered = try daemon.notifications(app: app).delivered.filter { $0.app == app }
        var listed: [String: [Double]] = [:]
        for record in delivered { listed[record.request.identifier, default: []].append(record.due) }
        // Alerts without a collapse id: each one shown is listed under its apns-id, once.
        var newest: [String: PushControlInterface.RecordMessage] = [:]
        for id in pushes.order {
            guard let entry = pushes.tracked[id], entry.push.kind != .background, let record = records[id],
                record.outcome == "shown" || (entry.push.kind == .mixed && showings[id] != nil)
            else { continue }
            if let collapse = entry.push.collapseID {
                if record.acceptedAt > newest[collapse]?.acceptedAt ?? -1 { newest[collapse] = record }
                continue
            }
            let dues = listed[id] ?? []
            if dues.count != 1 {
                pushProblem("alert/\(id)", "push \(id) was shown, but the delivered list has \(dues.count) alerts for it")
            } else if abs(dues[0] - record.acceptedAt) > NotificationChecks.slack {
                // Its alert is there for another acceptance: the push was handed in again, and shown again.
                pushes.shownTwice.insert(id)
                pushProblem(
                    "alert/\(id)",
                    "ALERT SHOWN TWICE: push \(id), accepted \(instant(record.acceptedAt)), is in the delivered list for \(instant(dues[0]))")
            }
        }
        // Alerts with one: the list holds the newest push's, not an older one shown again.
        for (collapse, record) in newest {
            let dues = listed[collapse] ?? []
            if dues.count != 1 || abs(dues[0] - record.acceptedAt) > NotificationChecks.slack {
                let older = records.values.filter { $0.collapseId == collapse && dues.contains($0.acceptedAt) }.map(\.id)
                if !older.isEmpty { pushes.shownTwice.formUnion(older) }
                pushProblem(
                    "collapse/\(collapse)",
                    "collapse id \(collapse): the newest push shown is \(record.id) (accepted \(instant(record.acceptedAt))), but the "
                        + "delivered list has \(dues.map(instant))\(older.isEmpty ? "" : " — an older push's alert shown again: \(older)")")
            }
        }
    }
}
