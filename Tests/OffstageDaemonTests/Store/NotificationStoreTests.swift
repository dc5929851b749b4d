import Foundation
import GRDB
import OffstageCore
@testable import OffstageDaemon
import Testing

/// The notification tables (SPEC NT-1, NT-2, MAN-3; §11 reliability: a crash loses no notification and delivers none
/// twice): what each action writes, the firing's one transaction, and the round trip back into the core.
@Suite("OffstageStore: notification tables")
struct NotificationStoreTests {
    static let app: AppID = "com.example.alarm"
    static let other: AppID = "com.example.news"
    static let start = Instant(secondsSinceEpoch: 1_800_000_000)

    func withStore(_ body: (OffstageStore, String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-nt-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(try OffstageStore(path: folder + "/offstage.sqlite"), folder)
    }

    static func pending(
        _ identifier: String, due seconds: Double, trigger: NotificationTrigger = .timeInterval(seconds: 60, repeats: true)
    ) -> PendingNotification {
        let request = NotificationRequest(
            identifier: identifier,
            content: NotificationContent(title: "Wake up", body: identifier, badge: 1, userInfo: #"{"n": 1}"#),
            trigger: trigger)
        return PendingNotification(request: request, addedAt: start, due: start + .seconds(double: seconds))
    }

    static func delivered(_ entry: PendingNotification, app: AppID = app, route: NotificationRoute = .user) -> DeliveredNotification {
        DeliveredNotification(
            app: app, request: entry.request, due: entry.due, deliveredAt: entry.due + .milliseconds(3), late: false,
            route: route)
    }

    @Test("NT-1: a saved request is stored, replaced by one with its identifier, and removed")
    func pendingRows() throws {
        try withStore { store, _ in
            try store.apply(.savePending(Self.app, Self.pending("a", due: 60)))
            try store.apply(.savePending(Self.app, Self.pending("b", due: 120)))
            try store.apply(.savePending(Self.other, Self.pending("a", due: 30)))
            try store.apply(.savePending(Self.app, Self.pending("a", due: 90)))
            var loaded = try store.loadNotifications()
            #expect(loaded.pending.count == 3)
            #expect(loaded.pending.first { $0.0 == Self.app && $0.1.identifier == "a" }?.1 == Self.pending("a", due: 90))
            try store.apply(.removePending(Self.app, identifiers: ["a", "unknown"]))
            loaded = try store.loadNotifications()
            #expect(Set(loaded.pending.map { "\($0.0)/\($0.1.identifier)" }) == ["\(Self.app)/b", "\(Self.other)/a"])
        }
    }

    @Test("NT-2: a firing stores its delivery and the request's next time together; a one-shot request goes")
    func fireRows() throws {
        try withStore { store, _ in
            let repeating = Self.pending("hourly", due: 60)
            let once = Self.pending("once", due: 60, trigger: .timeInterval(seconds: 60, repeats: false))
            try store.apply(.savePending(Self.app, repeating))
            try store.apply(.savePending(Self.app, once))
            let next = PendingNotification(request: repeating.request, addedAt: Self.start, due: repeating.due + .seconds(60))
            let record = Self.delivered(repeating)
            #expect(try store.apply(.fire(record.key, delivery: record, next: next)))
            let onceRecord = Self.delivered(once)
            #expect(try store.apply(.fire(onceRecord.key, delivery: onceRecord, next: nil)))
            let loaded = try store.loadNotifications()
            #expect(loaded.pending.map(\.1) == [next])
            #expect(loaded.deliveries.map(\.record) == [record, onceRecord])
            #expect(loaded.deliveries.allSatisfy { $0.desktopState == .pending && $0.desktopID == nil })
        }
    }

    @Test("NT-2 exactly once: the same firing recorded twice leaves one delivery row, and the second says so")
    func fireIsIdempotent() throws {
        try withStore { store, _ in
            let entry = Self.pending("hourly", due: 60)
            try store.apply(.savePending(Self.app, entry))
            let next = PendingNotification(request: entry.request, addedAt: Self.start, due: entry.due + .seconds(60))
            let record = Self.delivered(entry)
            #expect(try store.apply(.fire(record.key, delivery: record, next: next)))
            try store.recordDesktop(record.key, state: .shown, desktopID: 7)
            #expect(try store.apply(.fire(record.key, delivery: record, next: next)) == false)
            let loaded = try store.loadNotifications()
            #expect(loaded.deliveries == [OffstageStore.StoredDelivery(record: record, desktopState: .shown, desktopID: 7)])
            #expect(loaded.pending.map(\.1) == [next])
        }
    }

    @Test("NT-2 exactly once: a firing whose transaction fails half-way leaves no delivery and the request as it was")
    func fireIsAtomic() throws {
        try withStore { store, _ in
            let entry = Self.pending("hourly", due: 60)
            try store.apply(.savePending(Self.app, entry))
            // The second statement of the firing fails, as a full disk would.
            try store.database.write { db in
                try db.execute(
                    sql: "CREATE TRIGGER refuse BEFORE INSERT ON notification_pending BEGIN SELECT RAISE(ABORT, 'disk full'); END")
            }
            let next = PendingNotification(request: entry.request, addedAt: Self.start, due: entry.due + .seconds(60))
            let record = Self.delivered(entry)
            #expect(throws: (any Error).self) { try store.apply(.fire(record.key, delivery: record, next: next)) }
            let loaded = try store.loadNotifications()
            #expect(loaded.deliveries.isEmpty)
            #expect(loaded.pending.map(\.1) == [entry])
        }
    }

    @Test("NT-2: a run of actions is one transaction: each firing says whether it is new, and a failure keeps none")
    func runOfActions() throws {
        try withStore { store, _ in
            let first = Self.pending("first", due: 60, trigger: .date(Self.start + .seconds(60)))
            let second = Self.pending("second", due: 60, trigger: .date(Self.start + .seconds(60)))
            try store.apply([.savePending(Self.app, first), .savePending(Self.app, second)])
            let (one, two) = (Self.delivered(first), Self.delivered(second))
            #expect(try store.apply(.fire(one.key, delivery: one, next: nil)))
            let flags = try store.apply([
                .fire(one.key, delivery: one, next: nil), .show(one), .fire(two.key, delivery: two, next: nil), .saveBadge(Self.app, 5),
            ])
            #expect(flags == [false, false, true, false])
            var loaded = try store.loadNotifications()
            #expect(loaded.deliveries.map(\.record) == [one, two] && loaded.pending.isEmpty && loaded.badges == [Self.app: 5])
            try store.database.write { db in
                try db.execute(
                    sql: "CREATE TRIGGER refuse BEFORE INSERT ON notification_badge BEGIN SELECT RAISE(ABORT, 'disk full'); END")
            }
            let third = Self.pending("third", due: 90)
            #expect(throws: (any Error).self) {
                try store.apply([.savePending(Self.app, third), .removeDelivered(Self.app, keys: [one.key]), .saveBadge(Self.other, 1)])
            }
            loaded = try store.loadNotifications()
            #expect(loaded.deliveries.map(\.record) == [one, two] && loaded.pending.isEmpty && loaded.badges == [Self.app: 5])
        }
    }

    @Test("SET-2: a firing suppressed because notifications are off moves the request and records no delivery")
    func suppressedFire() throws {
        try withStore { store, _ in
            let entry = Self.pending("hourly", due: 60)
            try store.apply(.savePending(Self.app, entry))
            let next = PendingNotification(request: entry.request, addedAt: Self.start, due: entry.due + .seconds(60))
            #expect(try store.apply(.fire(Self.delivered(entry).key, delivery: nil, next: next)) == false)
            let loaded = try store.loadNotifications()
            #expect(loaded.deliveries.isEmpty && loaded.pending.map(\.1) == [next])
        }
    }

    @Test("NT-2: a delivery handed on by the app is updated, its desktop state recorded, and a removed one is gone")
    func deliveryRows() throws {
        try withStore { store, _ in
            let first = Self.pending("one", due: 60, trigger: .date(Self.start + .seconds(60)))
            let second = Self.pending("two", due: 70, trigger: .date(Self.start + .seconds(70)))
            var toApp = Self.delivered(first, route: .app)
            try store.apply(.fire(toApp.key, delivery: toApp, next: nil))
            let toUser = Self.delivered(second)
            try store.apply(.fire(toUser.key, delivery: toUser, next: nil))
            #expect(try store.loadNotifications().deliveries.map(\.record.route) == [.app, .user])
            toApp.route = .user
            try store.apply(.updateDelivery(toApp))
            try store.recordDesktop(toApp.key, state: .shown, desktopID: 41)
            try store.recordDesktop(toUser.key, state: .none, desktopID: nil)
            var loaded = try store.loadNotifications()
            #expect(
                loaded.deliveries == [
                    .init(record: toApp, desktopState: .shown, desktopID: 41), .init(record: toUser, desktopState: .none),
                ])
            // A show changes no table: the desktop state is recorded on its own.
            try store.apply(.show(toUser))
            try store.apply(.removeDelivered(Self.app, keys: [toApp.key]))
            loaded = try store.loadNotifications()
            #expect(loaded.deliveries.map(\.record) == [toUser])
        }
    }

    @Test("NT-1: badges and categories are stored per app; nil and an empty list remove them")
    func badgesAndCategories() throws {
        try withStore { store, _ in
            let categories = [
                NotificationCategory(
                    identifier: "alarm", actions: [NotificationActionButton(identifier: "snooze", title: "Snooze")])
            ]
            try store.apply(.saveBadge(Self.app, 3))
            try store.apply(.saveBadge(Self.other, 1))
            try store.apply(.saveCategories(Self.app, categories))
            var loaded = try store.loadNotifications()
            #expect(loaded.badges == [Self.app: 3, Self.other: 1] && loaded.categories == [Self.app: categories])
            try store.apply(.saveBadge(Self.app, nil))
            try store.apply(.saveCategories(Self.app, []))
            loaded = try store.loadNotifications()
            #expect(loaded.badges == [Self.other: 1] && loaded.categories.isEmpty)
        }
    }

    @Test("MAN-3: forgetting an app, or deleting it, removes every notification row it had and no other app's")
    func forgetApp() throws {
        try withStore { store, _ in
            for app in [Self.app, Self.other] {
                let entry = Self.pending("a", due: 60)
                try store.apply(.savePending(app, entry))
                try store.apply(.savePending(app, Self.pending("b", due: 90)))
                let record = Self.delivered(entry, app: app)
                try store.apply(.fire(record.key, delivery: record, next: nil))
                try store.apply(.saveBadge(app, 2))
                try store.apply(.saveCategories(app, [NotificationCategory(identifier: "c", actions: [])]))
            }
            try store.apply(.forgetApp(Self.app))
            var loaded = try store.loadNotifications()
            #expect(loaded.pending.allSatisfy { $0.0 == Self.other } && loaded.pending.count == 1)
            #expect(loaded.deliveries.map(\.record.app) == [Self.other])
            #expect(Array(loaded.badges.keys) == [Self.other] && Array(loaded.categories.keys) == [Self.other])
            try store.deleteApp(Self.other)
            loaded = try store.loadNotifications()
            #expect(loaded.pending.isEmpty && loaded.deliveries.isEmpty && loaded.badges.isEmpty && loaded.categories.isEmpty)
        }
    }

    @Test("The notification tables are added to a store made by the previous version, which keeps its apps and device")
    func migrationKeepsData() throws {
        try withStore { _, folder in
            let path = folder + "/old.sqlite"
            let old = try DatabasePool(path: path)
            try OffstageStore.migrator.migrate(old, upTo: "v1: apps, device, processes, events, meta")
            let manifest = Manifest(id: Self.app, executable: "Alarm")
            let app = InstalledApp(manifest: manifest, bundlePath: "/bundles/alarm", installedAt: Self.start, settings: AppSettings())
            var durable = AppDurableState()
            durable.forceQuit = true
            var device = DeviceState()
            device.locked = true
            try old.write { db in
                try db.execute(
                    sql: "INSERT INTO app (id, manifest, bundlePath, installedAt, settings, durable) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        Self.app.rawValue, try NotificationJSON.encode(manifest), app.bundlePath, app.installedAt.secondsSinceEpoch,
                        try NotificationJSON.encode(app.settings), try NotificationJSON.encode(durable),
                    ])
                try db.execute(sql: "INSERT INTO device (id, state) VALUES (1, ?)", arguments: [try NotificationJSON.encode(device)])
                try db.execute(sql: "INSERT INTO meta (key, value) VALUES ('numberFloor', '42')")
            }
            try old.close()
            let store = try OffstageStore(path: path)
            let apps = try store.loadApps()
            #expect(apps.map(\.0) == [app] && apps.map(\.1) == [durable])
            #expect(try store.meta("numberFloor") == "42")
            #expect(try store.loadDevice()?.locked == true)
            let loaded = try store.loadNotifications()
            #expect(loaded.pending.isEmpty && loaded.deliveries.isEmpty)
            try store.apply(.savePending(Self.app, Self.pending("a", due: 60)))
            #expect(try store.loadNotifications().pending.count == 1)
            let applied = try store.database.read { db in try OffstageStore.migrator.appliedIdentifiers(db) }
            #expect(applied.contains(OffstageStore.notificationsMigration))
        }
    }
}
