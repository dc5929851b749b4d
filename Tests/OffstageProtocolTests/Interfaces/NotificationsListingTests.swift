import Foundation
import OffstageCore
import OffstageProtocol
import Testing

/// The `Notifications` listing the daemon writes by hand (SPEC NT-2, §11: 64,000 pending listed): the same reply, key
/// for key and value for value, as the messages written by `JSONEncoder`, for every kind of trigger and content.
@Suite("The notification listing's hand-written JSON")
struct NotificationsListingTests {
    static let start = Instant(secondsSinceEpoch: 1_800_000_000.25)
    static let apps: [AppID] = ["com.example.alarm", "com.example.news"]

    /// Two apps in the background with one request of every shape pending each, some delivered, and badges.
    static func core() throws -> OffstageCore {
        var core = OffstageCore()
        for (index, id) in apps.enumerated() {
            core.restore(
                InstalledApp(manifest: Manifest(id: id, executable: "A"), bundlePath: "/b", installedAt: start, settings: .init()),
                durable: AppDurableState())
            _ = core.adopt(id, pid: Int32(10 + index), at: start)
        }
        let contents = [
            NotificationContent(badge: 1),
            NotificationContent(title: "Wake up"),
            NotificationContent(
                title: "Wake \"up\"\n", subtitle: "Seven", body: "ünïcode ✓ \u{1}", sound: "bell.caf", badge: 3,
                userInfo: #"{"nested":{"list":[1,2.5,null,true]},"path":"a/b"}"#, threadIdentifier: "t",
                categoryIdentifier: "alarm"),
            NotificationContent(body: "only a body", sound: "", badge: 0, userInfo: "{}"),
        ]
        let triggers: [NotificationTrigger] = [
            .timeInterval(seconds: 90.5, repeats: false),
            .timeInterval(seconds: 3600, repeats: true),
            .calendar(DateMatch(hour: 7, minute: 30), repeats: true),
            .calendar(DateMatch(year: 2030, month: 2, day: 28, hour: 6, minute: 0, second: 15, timeZone: "Asia/Kolkata"), repeats: false),
            .calendar(DateMatch(hour: 9, weekday: 2), repeats: true),
            .date(start + .seconds(86_400 * 3)),
        ]
        for (index, id) in apps.enumerated() {
            for (number, trigger) in triggers.enumerated() {
                let request = NotificationRequest(
                    identifier: "r\(number)", content: contents[(number + index) % contents.count], trigger: trigger)
                _ = try core.addNotification(id, pid: Int32(10 + index), request, at: start)
            }
            for number in 0..<2 {
                let request = NotificationRequest(
                    identifier: "now\(number)", content: contents[2 + number], trigger: .date(start + .milliseconds(5)))
                _ = try core.addNotification(id, pid: Int32(10 + index), request, at: start)
            }
        }
        _ = core.advance(to: start + .seconds(1))
        _ = try core.setBadge(apps[0], pid: 10, 7, at: start + .seconds(1))
        return core
    }

    @Test("NT-2: every app's listing, written by hand, reads back as the reply JSONEncoder writes", arguments: [nil, "com.example.news"] as [AppID?])
    func sameAsEncoder(app: AppID?) throws {
        let core = try Self.core()
        let listing = NotificationsControlInterface.NotificationsListing(core.notifications, app: app)
        #expect(listing.pending.count == (app == nil ? 12 : 6))
        #expect(listing.delivered.count == (app == nil ? 4 : 2))
        #expect(listing.badges.count == (app == nil ? 1 : 0))
        var json = VarlinkDirectJSON()
        try listing.appendJSON(to: &json)
        let direct = try JSONDecoder().decode(NotificationsControlInterface.NotificationsReply.self, from: Data(json.bytes))
        let encoded = try JSONDecoder().decode(
            NotificationsControlInterface.NotificationsReply.self, from: JSONEncoder().encode(listing))
        #expect(direct == listing.reply)
        #expect(encoded == listing.reply)
        // The order is the reply's: soonest first, then by app and identifier; delivered oldest first.
        #expect(direct.pending.map(\.due) == direct.pending.map(\.due).sorted())
        #expect(direct == NotificationsControlInterface.NotificationsReply(core.notifications, app: app))
        // The content came through as the app gave it, user info included.
        let rich = try #require(direct.delivered.first { $0.request.identifier == "now0" })
        #expect(rich.request.content.userInfo?["path"] == .string("a/b"))
        #expect(try rich.request.request().content == Self.richContent)
        let bare = direct.pending.filter { $0.request.content == NotificationsInterface.ContentMessage(badge: 1) }
        #expect(bare.count == (app == nil ? 3 : 1))
    }

    static var richContent: NotificationContent {
        NotificationContent(
            title: "Wake \"up\"\n", subtitle: "Seven", body: "ünïcode ✓ \u{1}", sound: "bell.caf", badge: 3,
            userInfo: #"{"nested":{"list":[1,2.5,null,true]},"path":"a/b"}"#, threadIdentifier: "t",
            categoryIdentifier: "alarm")
    }

    @Test("NT-2: an empty schedule lists nothing, with the device's zone")
    func emptySchedule() throws {
        let listing = NotificationsControlInterface.NotificationsListing(NotificationSchedule(), app: nil)
        var json = VarlinkDirectJSON()
        try listing.appendJSON(to: &json)
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"{"pending":[],"delivered":[],"badges":[],"timeZone":"UTC"}"#)
    }
}
