import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

/// Web Push subscriptions in the store (SPEC NT-3, decision 0034): one live subscription per app, kept with the user
/// agent's keys across a restart, and ended — never forgotten — when the app unsubscribes or is uninstalled.
@Suite("OffstageStore: Web Push subscriptions")
struct WebPushStoreTests {
    static let start = Instant(secondsSinceEpoch: 1_800_000_000)

    static func candidate(_ id: String, app: AppID = "com.example.messenger", key: Data? = nil) -> OffstageStore.WebPushSubscriptionRow {
        .init(
            id: id, app: app, privateKey: Data(repeating: 7, count: 32), authSecret: Data(repeating: 9, count: 16),
            applicationServerKey: key, createdAt: start, endedAt: nil)
    }

    func withStore(_ body: (OffstageStore, String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-webpush-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(try OffstageStore(path: folder + "/offstage.sqlite"), folder)
    }

    @Test("NT-3: subscribing again returns the live subscription, keys and restriction included, also after a restart")
    func sameSubscription() throws {
        try withStore { store, folder in
            let key = Data([4] + [UInt8](repeating: 1, count: 64))
            #expect(try store.subscribeWebPush(Self.candidate("s1", key: key)).id == "s1")
            #expect(try store.subscribeWebPush(Self.candidate("s2")) == Self.candidate("s1", key: key), "the first one")
            let reopened = try OffstageStore(path: folder + "/offstage.sqlite")
            #expect(try reopened.webPushSubscription(id: "s1") == Self.candidate("s1", key: key))
            #expect(try reopened.webPushSubscription(id: "s2") == nil, "never made")
            #expect(try reopened.liveWebPushSubscriptionIDs() == ["com.example.messenger": "s1"])
        }
    }

    @Test("NT-3: an ended subscription stays as the record of when (410 Gone), and the next one is new")
    func endedStays() throws {
        try withStore { store, _ in
            _ = try store.subscribeWebPush(Self.candidate("s1"))
            _ = try store.subscribeWebPush(Self.candidate("t1", app: "com.example.other"))
            #expect(try store.endWebPushSubscriptions(of: "com.example.messenger", at: Self.start + .seconds(5)) == 1)
            #expect(try store.endWebPushSubscriptions(of: "com.example.messenger", at: Self.start + .seconds(6)) == 0)
            #expect(try store.webPushSubscription(id: "s1")?.endedAt == Self.start + .seconds(5))
            #expect(try store.liveWebPushSubscription(of: "com.example.messenger") == nil)
            #expect(try store.liveWebPushSubscription(of: "com.example.other")?.id == "t1", "another app's is untouched")
            #expect(try store.subscribeWebPush(Self.candidate("s2")).id == "s2")
        }
    }
}
