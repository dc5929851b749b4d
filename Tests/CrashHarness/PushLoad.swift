import Dispatch
import Foundation
import OffstageProtocol
import OffstagePush

/// Remote notifications under kill -9 (SPEC NT-3, NT-4, NT-5, §11). An app server — the harness itself, with
/// OffstagePush's `APNsProviderClient` and an ES256 key registered with the daemon — sends background, alert and
/// mixed pushes with unique `apns-id`s (some with a collapse id, some expiring soon) over HTTP/2 to the daemon's
/// gateway, for the Messenger example, which registered for remote notifications and writes a line for every push its
/// handler is given. The harness kills the daemon while a batch's requests are in flight (in the middle of the
/// gateway's accepts), resends what got no answer with the same `apns-id` after the restart, and now and then resends
/// one that was answered 200 (a provider's retry). ``PushLedger`` is what it knows of each push; `checkPushes`
/// compares it with the daemon's push records and the handler's lines (``PushChecks``).
extension HarnessApp {
    /// The app the pushes are for. The random operations never touch it (no uninstall, no settings, no force-quit),
    /// so its token stays the same for the whole run.
    static var messenger: HarnessApp {
        HarnessApp(id: "com.crash.messenger", example: "Messenger", manifest: ["UIBackgroundModes": ["remote-notification"]])
    }
}

/// One push the app server sends, the same bytes at every attempt.
struct PlannedPush: Sendable {
    enum Kind: String, Sendable {
        /// `content-available: 1` only: wakes the app, shows nothing.
        case background
        /// An alert only: shown, no handler.
        case alert
        /// An alert with `content-available: 1`: shown, and wakes the app.
        case mixed
    }

    var id: String
    var kind: Kind
    var collapseID: String?
    /// `apns-expiration`, UNIX seconds.
    var expiration: Int64?
    var payload: Data

    func notification(token: String) -> APNsNotification {
        APNsNotification(
            deviceToken: token, topic: HarnessApp.messenger.id, payload: payload,
            pushType: kind == .background ? .background : .alert, priority: kind == .background ? .powerConsidered : .immediate,
            expiration: expiration, collapseID: collapseID, apnsID: id)
    }
}

/// What came of one attempt to send a push.
enum PushAttempt: Equatable, Sendable {
    /// Answered 200: the push is acknowledged.
    case acknowledged
    /// Answered with an APNs refusal.
    case refused(status: Int, reason: String)
    /// Written, and no answer came (the connection closed: the daemon was killed). It may or may not be stored.
    case cut
}

/// What the harness knows of every push it sent.
struct PushLedger {
    struct Tracked {
        var push: PlannedPush
        var attempts: [PushAttempt] = []
        /// The cycle of its first attempt.
        var cycle: Int

        var acknowledged: Bool { attempts.contains(.acknowledged) }
        /// Never answered 200, and at least one attempt may have been stored.
        var uncertain: Bool { !acknowledged && attempts.contains(.cut) }
        /// Every attempt refused: it must not be stored.
        var refusedOnly: Bool { !attempts.isEmpty && attempts.allSatisfy { if case .refused = $0 { true } else { false } } }
    }

    var tracked: [String: Tracked] = [:]
    var order: [String] = []
    var counter = 0
    /// Problems already reported, so a lasting one is printed once.
    var reported: Set<String> = []
    var lost: Set<String> = []
    var duplicated: Set<String> = []
    var shownTwice: Set<String> = []
    var ghosts: Set<String> = []
    var wrongOutcome: Set<String> = []
    /// Pushes whose latest attempt was cut by a kill, not yet looked for in the records.
    var cutSinceLastCheck: Set<String> = []

    mutating func plan(_ push: PlannedPush, cycle: Int) {
        tracked[push.id] = Tracked(push: push, cycle: cycle)
        order.append(push.id)
    }

    /// Pushes never answered 200 that may be stored (to retry with the same `apns-id`).
    var uncertain: [String] { order.filter { tracked[$0]?.uncertain == true } }
}

/// The push figures of a run.
struct PushFigures {
    var batches = 0
    var skippedBatches = 0
    var planned = 0
    var attempts = 0
    /// Attempts that resent an `apns-id` already sent: after a cut attempt, or after a 200.
    var retriesAfterCut = 0
    var retriesAfter200 = 0
    var answered200 = 0
    var cut = 0
    var refused: [String: Int] = [:]
    /// Pushes answered 200 at least once, and pushes whose every attempt was cut.
    var acknowledged = 0
    var uncertain = 0
    var uncertainStored = 0
    /// Requests cut by a kill, looked for after the restart before any retry: stored by the gateway (the kill fell
    /// between its store and its answer) or not.
    var cutStored = 0
    var cutNotStored = 0
    /// Kills aimed at a batch in flight, and those of them with at least one request unanswered.
    var killsAimedAtAccepts = 0
    var killsDuringAccepts = 0
    /// From the final records: each outcome, handler calls seen by the app, handlers cut off by a kill.
    var outcomes: [String: Int] = [:]
    /// Why pushes were not delivered, and how many each.
    var notDelivered: [String: Int] = [:]
    var handlerCalls = 0
    var cutOffByKill = 0
    var shown = 0
    var lost = 0
    var duplicated = 0
    var shownTwice = 0
    var ghosts = 0
    var wrongOutcome = 0
    var settleSeconds = 0.0

    var summary: String {
        let refusals = refused.isEmpty ? "" : " (" + refused.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        let whyNot = notDelivered.isEmpty ? "" : "; not delivered: " + notDelivered.sorted { $0.value > $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let ends = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return """
            pushes: \(planned) sent in \(batches) batches (\(skippedBatches) skipped), \(attempts) attempts (\(retriesAfterCut) \
            retries after no answer, \(retriesAfter200) after a 200): \(answered200) answered 200, \(cut) cut by a kill, \
            \(refused.values.reduce(0, +)) refused\(refusals); \(acknowledged) pushes acknowledged, \(uncertain) never answered \
            (\(uncertainStored) of them stored)
            push kills: \(killsAimedAtAccepts) aimed at a batch in flight, \(killsDuringAccepts) during accepts (a request unanswered); \
            of the requests cut, \(cutStored) had been stored and \(cutNotStored) not; \(cutOffByKill) handlers cut off by a kill
            push records: \(ends); \(handlerCalls) handler calls, \(shown) alerts shown; settled \
            \(String(format: "%.1f", settleSeconds)) s after the last start\(whyNot)
            pushes lost: \(lost), duplicated: \(duplicated), alerts shown twice: \(shownTwice), stored though refused or \
            unknown: \(ghosts), outcome against the handler's calls: \(wrongOutcome)
            """
    }
}

/// A lock-guarded box the sending tasks write into and the harness's thread reads once they are done.
final class AttemptBox: @unchecked Sendable {
    private let lock = NSLock()
    private var attempts: [String: PushAttempt] = [:]
    private var sent: Set<String> = []
    private var failure: String?

    func markSent(_ id: String) { lock.withLock { _ = sent.insert(id) } }
    func record(_ id: String, _ attempt: PushAttempt) { lock.withLock { attempts[id] = attempt } }
    func fail(_ text: String) { lock.withLock { failure = text } }

    var result: (attempts: [String: PushAttempt], sent: Set<String>, failure: String?) {
        lock.withLock { (attempts, sent, failure) }
    }
}

/// The app server: its provider key (registered with the daemon through the CLI) and the Messenger's token.
struct PushAppServer {
    let credentials: APNsProviderClient.Configuration.Credentials
    let token: String

    /// Sends `pushes` over one HTTP/2 connection to `address`, the first alone and the others at once; `whileInFlight`
    /// runs on the calling thread once those are on their way (the harness kills the daemon there). Returns each push's attempt; pushes missing
    /// from it were never sent (the connection could not be made), and `failure` says why.
    func send(
        _ pushes: [PlannedPush], to address: (host: String, port: Int), whileInFlight: () -> Void
    ) -> (attempts: [String: PushAttempt], sent: Set<String>, failure: String?) {
        let box = AttemptBox()
        let ready = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let configuration = APNsProviderClient.Configuration(host: address.host, port: address.port, credentials: credentials)
        let notifications = pushes.map { ($0.id, $0.notification(token: token)) }
        Task {
            defer { done.signal() }
            let client: APNsProviderClient
            do {
                client = try await APNsProviderClient.connect(configuration)
            } catch {
                box.fail("\(error)")
                ready.signal()
                return
            }
            @Sendable func send(_ id: String, _ notification: APNsNotification) async {
                box.markSent(id)
                do {
                    let response = try await client.send(notification)
                    box.record(id, response.status == 200 ? .acknowledged : .refused(status: response.status, reason: response.reason ?? "?"))
                } catch {
                    box.record(id, .cut)
                }
            }
            // The first alone: the connection's settings are exchanged and the provider token signed before the
            // others go, so a kill aimed a few milliseconds after them falls among the gateway's accepts.
            if let first = notifications.first { await send(first.0, first.1) }
            await withTaskGroup(of: Void.self) { group in
                for (id, notification) in notifications.dropFirst() {
                    group.addTask { await send(id, notification) }
                }
                ready.signal()
            }
            await client.close()
        }
        ready.wait()
        whileInFlight()
        if done.wait(timeout: .now() + 30) == .timedOut {
            box.fail("the pushes got no answer and no error within 30 s")
        }
        return box.result
    }
}

/// How a cycle sends pushes.
enum PushPlan {
    /// A batch early in the cycle, answered while the daemon runs.
    case batch
    /// A batch at the end of the cycle, the daemon killed while its requests are in flight.
    case killDuringAccepts
}

extension CrashRun {
    /// Installs the Messenger, opens it until it has registered for remote notifications, sends it to the background,
    /// and registers a provider key for it (at the first start; both stay for the whole run).
    func setUpPushes() throws {
        let app = HarnessApp.messenger
        let installed = try daemon.cli(["install", bundlePath(app)])
        guard installed.status == 0 else { throw HarnessFailure("install \(app.id) failed: \(installed.stderr)") }
        let keyPath = daemon.root + "/provider.p8"
        let added = try daemon.cli(["push-keys", "add", "--team-id", "CRASHTEAM1", "--generate", keyPath, "--topic", app.id])
        guard added.status == 0 else { throw HarnessFailure("push-keys add failed: \(added.stderr)") }
        let keyID = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let opened = try daemon.cli(["open", app.id])
        guard opened.status == 0 else { throw HarnessFailure("open \(app.id) failed: \(opened.stderr)") }
        var token: String?
        let deadline = Date().addingTimeInterval(15)
        while token == nil, Date() < deadline {
            token = try pushStatus().apps.first { $0.app == app.id }?.token
            if token == nil { usleep(50_000) }
        }
        guard let token else { throw HarnessFailure("\(app.id) did not register for remote notifications within 15 s") }
        let home = try daemon.cli(["home"])
        guard home.status == 0 else { throw HarnessFailure("home failed: \(home.stderr)") }
        let privateKey = try String(contentsOfFile: keyPath, encoding: .utf8)
        pushServer = PushAppServer(
            credentials: .init(keyID: keyID, teamID: "CRASHTEAM1", privateKeyPEM: privateKey), token: token)
    }

    /// The daemon's push status with every record (the store keeps up to 10,000 done ones).
    func pushStatus() throws -> PushControlInterface.StatusReply {
        try daemon.json(["push-status", "--limit", "10000"], as: PushControlInterface.StatusReply.self)
    }

    /// Whether this cycle sends pushes, and how. A kill during the accepts only when the cycle's end is not aimed
    /// at notifications (the cycle has one kill).
    func pushPlan(notificationPlan: NotificationKill?) -> PushPlan? {
        switch pushRandom.index(below: 100) {
        case 0..<40: return nil
        case 40..<70: return .batch
        default: return notificationPlan == nil || notificationPlan == .ordinary ? .killDuringAccepts : .batch
        }
    }

    /// A new push: background (most), alert (some with one of a few collapse ids) or both; a few background ones
    /// expire a second or a few after they are sent.
    func makePush() -> PlannedPush {
        pushes.counter += 1
        let id = UUID().uuidString.lowercased()
        let label = "p\(cycle)-\(pushes.counter)"
        let roll = pushRandom.index(below: 100)
        let kind: PlannedPush.Kind = roll < 55 ? .background : roll < 85 ? .alert : .mixed
        var aps: [String: Any] = [:]
        if kind != .alert { aps["content-available"] = 1 }
        if kind != .background { aps["alert"] = ["title": "crash", "body": label] }
        var payload: [String: Any] = ["aps": aps, "h": label]
        // Half of the handler runs post a notification of their own (the Messenger's "message"), the rest have
        // nothing to fetch and complete at once.
        if kind != .alert, pushRandom.chance(0.5) { payload["message"] = "msg-" + label }
        let collapseID = kind == .alert && pushRandom.chance(0.4) ? "c\(1 + pushRandom.index(below: 3))" : nil
        let expiration = kind == .background && pushRandom.chance(0.2)
            ? Int64(Date().timeIntervalSince1970) + Int64(1 + pushRandom.index(below: 4)) : nil
        let data = (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])) ?? Data()
        return PlannedPush(id: id, kind: kind, collapseID: collapseID, expiration: expiration, payload: data)
    }

    /// The gateway's address from the daemon's push status (a new port at every start).
    func gatewayAddress() throws -> (host: String, port: Int)? {
        let address = try pushStatus().gateway.address
        guard let url = URL(string: address), let host = url.host, let port = url.port else { return nil }
        return (host, port)
    }

    /// Sends a batch of new pushes, with the ones still unanswered resent (same `apns-id`, same bytes) and now and
    /// then one already answered 200; with `killing`, kills the daemon a random moment (0–25 ms) after the requests
    /// are on their way.
    func sendPushes(killing: Bool) throws {
        guard let server = pushServer else { return }
        guard let address = try gatewayAddress() else {
            report.pushes.skippedBatches += 1
            violation("the daemon's push status gives no gateway address")
            return
        }
        var batch = (0..<(3 + pushRandom.index(below: 10))).map { _ in makePush() }
        for push in batch { pushes.plan(push, cycle: cycle) }
        report.pushes.planned += batch.count
        for id in pushes.uncertain where pushRandom.chance(0.7) {
            if let push = pushes.tracked[id]?.push { batch.append(push) }
        }
        let acknowledged = pushes.order.filter { pushes.tracked[$0]?.acknowledged == true }
        if !acknowledged.isEmpty, pushRandom.chance(0.3),
            let push = pushes.tracked[acknowledged[pushRandom.index(below: acknowledged.count)]]?.push
        {
            batch.append(push)
        }
        // Shuffled, so a kill cuts a mix of new pushes and retries.
        for index in batch.indices.reversed() where index > 0 { batch.swapAt(index, pushRandom.index(below: index + 1)) }
        let delay = pushRandom.uniform(0, 0.025)
        report.pushes.batches += 1
        let result = server.send(batch, to: address) {
            guard killing else { return }
            usleep(UInt32(delay * 1_000_000))
            daemon.crash()
        }
        if let failure = result.failure { violation("push batch: \(failure)") }
        var unanswered = false
        for push in batch where result.sent.contains(push.id) {
            let attempt = result.attempts[push.id] ?? .cut
            let earlier = pushes.tracked[push.id]?.attempts ?? []
            pushes.tracked[push.id]?.attempts.append(attempt)
            report.pushes.attempts += 1
            if earlier.contains(.acknowledged) {
                report.pushes.retriesAfter200 += 1
            } else if !earlier.isEmpty {
                report.pushes.retriesAfterCut += 1
            }
            switch attempt {
            case .acknowledged: report.pushes.answered200 += 1
            case .cut:
                report.pushes.cut += 1
                pushes.cutSinceLastCheck.insert(push.id)
                unanswered = true
                if !killing { violation("push \(push.id) got no answer, and the daemon was not killed") }
            case .refused(let status, let reason):
                report.pushes.refused["\(status) \(reason)", default: 0] += 1
                // Nothing the harness sends is wrong; a retry of a push already stored is answered 200 again.
                violation("push \(push.id) (\(push.kind.rawValue)\(earlier.isEmpty ? "" : ", a retry")) refused: \(status) \(reason)")
            }
        }
        if killing {
            report.pushes.killsAimedAtAccepts += 1
            if unanswered { report.pushes.killsDuringAccepts += 1 }
        }
    }
}
