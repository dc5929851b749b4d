import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `notification-add` fuzz target must keep (SPEC NT-1, §11: malformed input gets a
/// clear error and changes nothing). An input is one Varlink message, as an app's `io.offstage.Notifications.Add`
/// call would be; it goes the whole way an app's request goes: the codec, the wire types, the core's schedule, its
/// firing, and the user's listing of it.
///
/// Compiled twice, like `VarlinkFuzzChecks.swift`: into this test target (`NotificationFuzzRegressionTests` replays
/// the committed inputs) and by `scripts/fuzz` next to `Fuzz/Targets/NotificationAddFuzz.swift`. It imports only
/// Foundation and the modules under test.
enum NotificationFuzzChecks {
    /// A property that did not hold, in words.
    struct Violation: Error, CustomStringConvertible {
        var description: String

        init(_ description: String) { self.description = description }
    }

    static let app: AppID = "com.example.fuzz"
    static let pid: Int32 = 4242
    static let now = Instant(secondsSinceEpoch: 1_800_000_000.123)

    /// A core with one app running in the background: what it adds goes to the user when it fires.
    static func core() -> OffstageCore {
        var core = OffstageCore()
        core.restore(
            InstalledApp(manifest: Manifest(id: app, executable: "Fuzz"), bundlePath: "/b", installedAt: now, settings: .init()),
            durable: AppDurableState())
        _ = core.adopt(app, pid: pid, at: now)
        return core
    }

    /// How far an input went.
    enum Outcome: Equatable {
        /// Not a call the codec reads (the varlink-codec target's concern).
        case notACall
        /// Its parameters are not an Add's: InvalidParameter, naming one.
        case refusedParameters
        /// The wire request, or the core, refused it with a clear error, changing nothing.
        case refusedRequest
        /// Added, listed as added, and fired once at its due time.
        case fired
    }

    @discardableResult
    static func checkAdd(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        // Messages the codec refuses are the varlink-codec target's.
        guard let call = try? VarlinkCodec.decodeCall(Data(bytes)) else { return .notACall }
        let parameters: NotificationsInterface.AddParameters
        do throws(VarlinkError) {
            parameters = try call.decodeParameters(as: NotificationsInterface.AddParameters.self)
        } catch {
            guard error.name == VarlinkError.Name.invalidParameter,
                let named = error.stringParameter("parameter"), !named.isEmpty
            else { throw Violation("undecodable parameters refused as \(error), not InvalidParameter naming one") }
            return .refusedParameters
        }
        let request: NotificationRequest
        do throws(CoreError) {
            request = try parameters.request.request()
        } catch {
            try checkRefusal(error, allowed: [.invalidArgument], what: "the wire request")
            return .refusedRequest
        }
        var core = core()
        let before = core.notifications
        do throws(CoreError) {
            _ = try core.addNotification(app, pid: pid, request, at: now)
        } catch {
            try checkRefusal(error, allowed: [.invalidArgument, .tooManyPendingRequests], what: "the request")
            // Nothing changed.
            guard core.notifications == before else { throw Violation("a refused request changed the schedule") }
            return .refusedRequest
        }
        // What is kept is the request as the core validated it.
        guard let pending = core.notifications.pending(app, identifier: request.identifier) else {
            throw Violation("an accepted request is not pending")
        }
        let due = pending.due
        guard due >= now, due.nanosecondsSinceEpoch % 1_000_000 == 0 else {
            throw Violation("due \(due.nanosecondsSinceEpoch) is before the add or not a whole millisecond")
        }
        try checkListing(core, request: pending.request, due: due)
        // It fires once at its due time, to the user, and stays pending only if it repeats, later.
        _ = core.advance(to: due)
        let delivered = core.notifications.delivered[app] ?? []
        guard delivered.count == 1, delivered[0].due == due, delivered[0].route == .user, !delivered[0].late else {
            throw Violation("at its due time it was delivered \(delivered.count) times, not once to the user on time")
        }
        let next = core.notifications.pending(app, identifier: request.identifier)
        if request.trigger.repeats {
            guard let next, next.due > due else { throw Violation("a repeating request has no later due time") }
        } else if next != nil {
            throw Violation("a request that does not repeat is still pending after it fired")
        }
        return .fired
    }

    /// A refusal names what was wrong and the fix, with one of the codes the interface documents.
    private static func checkRefusal(_ error: CoreError, allowed: [CoreError.Code], what: String) throws(Violation) {
        guard allowed.contains(error.code) else { throw Violation("\(what) refused with \(error.code)") }
        guard !error.message.isEmpty, !error.fix.isEmpty else {
            throw Violation("\(what) refused without a message or a fix: \(error)")
        }
    }

    /// What the user lists is the request as added: the hand-written listing reads back as the encoder's reply, and
    /// its request converts back to the same core request.
    private static func checkListing(_ core: OffstageCore, request: NotificationRequest, due: Instant) throws(Violation) {
        let listing = NotificationsControlInterface.NotificationsListing(core.notifications, app: nil)
        var json = VarlinkDirectJSON()
        do {
            try listing.appendJSON(to: &json)
        } catch {
            throw Violation("the listing could not be written: \(error)")
        }
        let direct: NotificationsControlInterface.NotificationsReply
        let encoded: NotificationsControlInterface.NotificationsReply
        do {
            direct = try JSONDecoder().decode(NotificationsControlInterface.NotificationsReply.self, from: Data(json.bytes))
            encoded = try JSONDecoder().decode(
                NotificationsControlInterface.NotificationsReply.self, from: JSONEncoder().encode(listing))
        } catch {
            throw Violation("the listing does not read back: \(error)\n\(String(decoding: json.bytes, as: UTF8.self))")
        }
        guard direct == listing.reply, encoded == listing.reply else {
            throw Violation("the hand-written listing reads back differently from the encoder's")
        }
        guard direct.pending.count == 1, NotificationsInterface.dueInstant(direct.pending[0].due) == due else {
            throw Violation("the listing has \(direct.pending.count) pending, or another due time")
        }
        let listed: NotificationRequest
        do throws(CoreError) {
            listed = try direct.pending[0].request.request()
        } catch {
            throw Violation("the listed request is refused when read back: \(error)")
        }
        guard listed == request || listedEquivalent(listed, request) else {
            throw Violation("the listed request differs from the one added:\n\(listed)\n\(request)")
        }
    }

    /// A listed request may differ from the added one only where the wire rounds: a date's instant to what a double
    /// of seconds holds, and the user info's text (parsed and written again with sorted keys).
    private static func listedEquivalent(_ listed: NotificationRequest, _ added: NotificationRequest) -> Bool {
        var listed = listed
        var added = added
        if case .date(let a) = added.trigger, case .date(let b) = listed.trigger,
            abs(a.nanosecondsSinceEpoch - b.nanosecondsSinceEpoch) <= 1_000
        {
            listed.trigger = added.trigger
        }
        let info = { (text: String) in try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary }
        if let a = info(added.content.userInfo), let b = info(listed.content.userInfo), a == b {
            added.content.userInfo = listed.content.userInfo
        }
        return listed == added
    }
}
