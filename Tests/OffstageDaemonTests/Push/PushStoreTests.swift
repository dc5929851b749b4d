import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

/// The device's push inbox, tokens and provider keys in the store (SPEC NT-3..5): a push is written before it is
/// acknowledged, moves on to its record, and is read back after a restart in the state it was in.
@Suite("OffstageStore: push inbox, tokens and keys")
struct PushStoreTests {
    static let start = Instant(secondsSinceEpoch: 1_800_000_000)

    func withStore(_ body: (OffstageStore, String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-push-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(try OffstageStore(path: folder + "/offstage.sqlite"), folder)
    }

    static func push(_ id: String, app: AppID = "com.example.messenger", seconds: Double = 0) -> RemotePush {
        RemotePush(
            id: id, app: app, type: .background, priority: 5, collapseID: id == "c" ? "chat" : nil,
            expiresAt: start + .seconds(3_600), acceptedAt: start + .seconds(double: seconds),
            aps: PushAPS(alert: PushAlert(title: "t", body: "ünï \"q\""), badge: 2, contentAvailable: true),
            payload: #"{"aps":{"content-available":1},"m":"\#(id)"}"#)
    }

    @Test("NT-5: a stored push is read back whole; the same apns-id stored again is not stored twice")
    func acceptOnce() throws {
        try withStore { store, _ in
            #expect(try store.acceptPush(Self.push("a")) == Self.push("a"))
            #expect(try store.acceptPush(Self.push("a")) == nil, "a provider's retry")
            let inbox = try store.loadPushInbox()
            #expect(inbox.accepted == [Self.push("a")])
            #expect(inbox.held.isEmpty && inbox.handed.isEmpty)
        }
    }

    @Test("NT-4, NT-5: two pushes of an app accepted at the same instant are stored a microsecond apart, so their alerts are two deliveries; a restart reads back the instants the store returned")
    func acceptanceInstantsUnique() throws {
        try withStore { store, folder in
            var first = Self.push("x", seconds: 7)
            first.collapseID = "chat"
            var second = Self.push("y", seconds: 7)
            second.collapseID = "chat"
            first.acceptedAt = first.acceptedAt + .nanoseconds(123)  // a gateway's clock, finer than the store keeps
            second.acceptedAt = first.acceptedAt
            let x = try #require(try store.acceptPush(first))
            let y = try #require(try store.acceptPush(second))
            let z = try #require(try store.acceptPush(Self.push("z", app: "com.example.other", seconds: 7)))
            #expect(abs((x.acceptedAt - first.acceptedAt).nanoseconds) < 1_000)
            #expect(y.acceptedAt < x.acceptedAt && (x.acceptedAt - y.acceptedAt).nanoseconds < 2_000, "\(x.acceptedAt) \(y.acceptedAt)")
            #expect(z.acceptedAt == x.acceptedAt, "another app's pushes do not move it")
            #expect(try store.acceptPush(second) == nil, "sent again, it is not stored again")
            let again = try OffstageStore(path: folder + "/offstage.sqlite")
            let accepted = try again.loadPushInbox().accepted
            #expect(Set(accepted) == [x, y, z], "what the store returned is what a restart reads back")
        }
    }

    @Test("NT-5: the records of finished pushes are kept to the newest 10,000, within a tenth and one trim interval; pushes not done are never trimmed")
    func recordsTrimmed() throws {
        try withStore { store, _ in
            #expect(try store.acceptPush(Self.push("waiting")) != nil)
            let total = 11_800
            for index in 0..<total {
                let id = "p\(index)"
                #expect(try store.acceptPush(Self.push(id, seconds: Double(index))) != nil)
                try store.apply([.finish(id: id, app: "com.example.messenger", .handled(.noData))], at: Self.start + .seconds(Double(index)))
            }
            let records = try store.pushRecords(app: nil, limit: 20_000)
            let capacity = OffstageStore.pushRecordCapacity
            #expect(records.count >= capacity)
            #expect(records.count <= capacity + capacity / 10 + OffstageStore.pushRecordTrimInterval)
            #expect(records.contains { $0.push.id == "p\(total - 1)" }, "the newest is kept")
            #expect(!records.contains { $0.push.id == "p0" }, "the oldest went")
            #expect(try store.loadPushInbox().accepted.map(\.id) == ["waiting"])
        }
    }

    @Test("NT-4, NT-5: a push held, handed or done is read back after a restart in that state; done ones are records only")
    func statesSurviveRestart() throws {
        try withStore { store, folder in
            for (index, id) in ["a", "b", "c", "d"].enumerated() { #expect(try store.acceptPush(Self.push(id, seconds: Double(index))) != nil) }
            try store.apply([.hold(Self.push("b"))], at: Self.start)
            try store.markPushHanded("c")
            try store.apply([.finish(id: "d", app: "com.example.messenger", .handled(.newData))], at: Self.start + .seconds(5))
            let again = try OffstageStore(path: folder + "/offstage.sqlite")
            let inbox = try again.loadPushInbox()
            #expect(inbox.accepted.map(\.id) == ["a"])
            #expect(inbox.held.map(\.id) == ["b"])
            #expect(inbox.handed.map(\.id) == ["c"])
            #expect(try again.pushCounts() == (stored: 3, held: 1))
            let records = try again.pushRecords(app: nil, limit: 10)
            #expect(records.map(\.push.id) == ["d", "c", "b", "a"], "newest first")
            #expect(records.first?.outcome == "handled" && records.first?.detail == "newData")
            #expect(records.first?.finishedAt == Self.start + .seconds(5))
            #expect(PushOutcome(name: records[0].outcome!, detail: records[0].detail) == .handled(.newData))
        }
    }

    @Test("NT-4: a finished push is not moved back by a late hold or hand-off")
    func doneIsFinal() throws {
        try withStore { store, _ in
            _ = try store.acceptPush(Self.push("a"))
            try store.apply([.finish(id: "a", app: "com.example.messenger", .expired)], at: Self.start)
            try store.apply([.hold(Self.push("a"))], at: Self.start)
            try store.markPushHanded("a")
            #expect(try store.pushRecords(app: nil, limit: 1).first?.state == "done")
            #expect(try store.loadPushInbox().accepted.isEmpty)
        }
    }

    @Test("NT-3: an app keeps one token until it is revoked; then the token names its revocation and a new one is issued")
    func tokens() throws {
        try withStore { store, _ in
            let app: AppID = "com.example.messenger"
            let first = try store.issueToken(to: app, candidate: String(repeating: "a", count: 64), at: Self.start)
            let again = try store.issueToken(to: app, candidate: String(repeating: "b", count: 64), at: Self.start)
            #expect(first == again && first == String(repeating: "a", count: 64))
            #expect(try store.liveToken(of: app) == first)
            #expect(try store.pushToken(first)?.app == app && store.pushToken(first)?.revokedAt == nil)
            #expect(try store.revokeTokens(of: app, at: Self.start + .seconds(9)) == 1)
            #expect(try store.pushToken(first)?.revokedAt == Self.start + .seconds(9))
            #expect(try store.liveToken(of: app) == nil)
            let next = try store.issueToken(to: app, candidate: String(repeating: "c", count: 64), at: Self.start)
            #expect(next != first)
            #expect(try store.pushToken(String(repeating: "f", count: 64)) == nil, "never issued")
        }
    }

    @Test("NT-3: provider keys are added, replaced, listed and removed")
    func keys() throws {
        try withStore { store, _ in
            let key = OffstageStore.PushKeyRow(
                id: "ABC123DEFG", teamID: "TEAM1", publicKeyPEM: "pem", topics: ["com.example.a"], addedAt: Self.start)
            try store.addPushKey(key)
            var replaced = key
            replaced.topics = nil
            try store.addPushKey(replaced)
            #expect(try store.pushKeys() == [replaced])
            #expect(try store.pushKey(id: "ABC123DEFG") == replaced)
            #expect(try store.removePushKey(id: "ABC123DEFG"))
            #expect(try !store.removePushKey(id: "ABC123DEFG"))
            #expect(try store.pushKeys().isEmpty)
        }
    }
}
