import Foundation
import Glibc
import Synchronization
import TestProcesses
import Testing

@testable import OffstageDaemon

/// The desktop notifications client against a real private `dbus-daemon` and a notification server written with
/// another D-Bus implementation (SPEC NT-2). Each test starts its own bus and ends exactly what it started, by pid.
@Suite("Desktop: notifications over a real session bus (NT-2)", .serialized)
struct DesktopNotificationsTests {
    /// Runs `body` with a private bus (and the server when `server`), a client on it, and the client's events.
    private func withBus(
        server: Bool = true,
        _ body: (PrivateSessionBus, DesktopNotifications, DesktopEventLog) throws -> Void
    ) throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        if server { try bus.startServer() }
        let log = DesktopEventLog()
        let client = try DesktopNotifications(address: bus.address, events: log.handler)
        defer { client.close() }
        try body(bus, client, log)
    }

    @Test("NT-2: Notify reaches the server with every field and hint intact, non-ASCII text included")
    func notifyArrivesIntact() throws {
        try withBus { bus, client, log in
            let notification = DesktopNotification(
                appName: "Nachrichten", replacesID: 0, icon: "mail-unread", summary: "Grüße aus Zürich ✉︎",
                body: "日本語の本文 — <b>bold</b>",
                actions: [.init(key: "default", label: "Öffnen"), .init(key: "reply", label: "Antworten")],
                hints: [
                    "urgency": .byte(2), "category": .string("im.received"), "x": .int32(-40), "resident": .bool(true),
                    "desktop-entry": .string("offstage"),
                ],
                expireTimeout: 7_000)
            try client.notify(token: 41, notification)
            #expect(log.waitFor(.shown(token: 41, id: 1)), "events: \(log.all)")
            let records = bus.records()
            try #require(records.count == 1)
            let record = records[0]
            #expect(record["app_name"] as? String == "Nachrichten")
            #expect(record["replaces_id"] as? Int == 0)
            #expect(record["app_icon"] as? String == "mail-unread")
            #expect(record["summary"] as? String == "Grüße aus Zürich ✉︎")
            #expect(record["body"] as? String == "日本語の本文 — <b>bold</b>")
            #expect(record["actions"] as? [String] == ["default", "Öffnen", "reply", "Antworten"])
            #expect(record["expire_timeout"] as? Int == 7_000)
            let hints = try #require(record["hints"] as? [String: [Any]])
            #expect(hints.count == 5)
            #expect(hints["urgency"]?.first as? String == "y" && hints["urgency"]?.last as? Int == 2)
            #expect(hints["category"]?.first as? String == "s" && hints["category"]?.last as? String == "im.received")
            #expect(hints["x"]?.first as? String == "i" && hints["x"]?.last as? Int == -40)
            #expect(hints["resident"]?.first as? String == "b" && hints["resident"]?.last as? Bool == true)
            #expect(hints["desktop-entry"]?.last as? String == "offstage")
        }
    }

    @Test("NT-2: each Notify comes back as .shown with the server's id for its token; replaces_id is kept")
    func shownCarriesServerIDs() throws {
        try withBus { bus, client, log in
            for token in UInt64(1)...3 {
                try client.notify(token: token * 100, DesktopNotification(summary: "n\(token)"))
            }
            try client.notify(token: 7, DesktopNotification(replacesID: 2, summary: "again"))
            for (token, id) in [(UInt64(100), UInt32(1)), (200, 2), (300, 3), (7, 2)] {
                #expect(log.waitFor(.shown(token: token, id: id)), "events: \(log.all)")
            }
            #expect(bus.records().map { $0["summary"] as? String } == ["n1", "n2", "n3", "again"])
            let information = try client.serverInformation(timeout: .seconds(10))
            #expect(information.name == "offstage-test-server" && information.vendor == "Offstage")
            #expect(information.version == "1.0" && information.specVersion == "1.2")
            #expect(try client.capabilities(timeout: .seconds(10)) == ["actions", "body", "body-markup"])
        }
    }

    @Test("NT-2: ActionInvoked and NotificationClosed from the server reach the events handler")
    func signalsReachTheHandler() throws {
        try withBus { bus, client, log in
            try client.notify(
                token: 1, DesktopNotification(summary: "click me", actions: [.init(key: "default", label: "")]))
            #expect(log.waitFor(.shown(token: 1, id: 1)))
            try bus.command("invoke 1 default")
            #expect(log.waitFor(.actionInvoked(id: 1, action: "default")), "events: \(log.all)")
            try bus.command("invoke 1 reply")
            #expect(log.waitFor(.actionInvoked(id: 1, action: "reply")), "events: \(log.all)")
            try client.close(id: 1)
            #expect(log.waitFor(.closed(id: 1, reason: 3)), "events: \(log.all)")
            try bus.command("close 1 2")
            #expect(log.waitFor(.closed(id: 1, reason: 2)), "events: \(log.all)")
            // In the order the server sent them.
            let signals = log.all.filter { if case .shown = $0 { false } else { true } }
            #expect(
                signals == [
                    .actionInvoked(id: 1, action: "default"), .actionInvoked(id: 1, action: "reply"),
                    .closed(id: 1, reason: 3), .closed(id: 1, reason: 2),
                ])
        }
    }

    @Test("NT-2: signals of a server that starts after the client subscribed still reach the handler")
    func serverStartingLaterIsHeard() throws {
        try withBus(server: false) { bus, client, log in
            try bus.startServer()
            try client.notify(token: 2, DesktopNotification(summary: "late server"))
            #expect(log.waitFor(.shown(token: 2, id: 1)), "events: \(log.all)")
            try bus.command("invoke 1 default")
            #expect(log.waitFor(.actionInvoked(id: 1, action: "default")), "events: \(log.all)")
        }
    }

    @Test("NT-2: close() called from the events handler ends the connection without waiting for itself")
    func closeFromTheHandler() throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        try bus.startServer()
        let log = DesktopEventLog()
        let holder = Mutex<DesktopNotifications?>(nil)
        let client = try DesktopNotifications(address: bus.address) { event in
            log.handler(event)
            if case .shown = event { holder.withLock { $0 }?.close() }
        }
        holder.withLock { $0 = client }
        try client.notify(token: 1, DesktopNotification(summary: "close on show"))
        #expect(log.waitFor(.shown(token: 1, id: 1)))
        let refused = PrivateSessionBus.waitFor(timeout: .seconds(20)) { () -> Bool? in
            (try? client.notify(token: 2, DesktopNotification(summary: "after"))) == nil ? true : nil
        }
        #expect(refused == true, "notify after close() must throw .disconnected")
        holder.withLock { $0 = nil }
        client.close()
        #expect(!log.all.contains { if case .disconnected = $0 { true } else { false } })
    }

    @Test("NT-2: with no notification server, Notify fails at once with ServiceUnknown instead of hanging")
    func noServerFailsWithServiceUnknown() throws {
        try withBus(server: false) { _, client, log in
            try client.notify(token: 5, DesktopNotification(summary: "nobody listens"))
            let message = log.first { event -> String? in
                if case .failed(5, let message) = event { message } else { nil }
            }
            #expect(message?.hasPrefix("org.freedesktop.DBus.Error.ServiceUnknown: ") == true, "events: \(log.all)")
            do {
                _ = try client.serverInformation(timeout: .seconds(10))
                Issue.record("GetServerInformation was answered with no server")
            } catch let error as DesktopNotificationsError {
                guard case .errorReply(let name, _) = error else { throw error }
                #expect(name == "org.freedesktop.DBus.Error.ServiceUnknown")
                #expect(error.description.contains("start one"))
            }
        }
    }

    @Test("NT-2: an absent or unreachable bus address makes init throw a clear error")
    func unreachableBusThrows() throws {
        var template = Array("/tmp/offstage-nobus-XXXXXX".utf8CString)
        let folder = try #require(mkdtemp(&template).map { String(cString: $0) })
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let addresses = [
            "", "unix:path=\(folder)/no-bus", "unix:abstract=offstage-no-such-bus-\(getpid())",
            "tcp:host=localhost,port=1", "garbage", "unix:path=\(folder)/a;unix:path=\(folder)/b,guid=0123",
        ]
        for address in addresses {
            do {
                let client = try DesktopNotifications(address: address) { _ in }
                client.close()
                Issue.record("connected to \(address)")
            } catch {
                guard case .noSessionBus(let shown, let reason) = error else {
                    Issue.record("unexpected error \(error) for \(address)")
                    continue
                }
                #expect(shown == address && !reason.isEmpty)
                #expect(error.description.hasPrefix("no session bus at "))
                #expect(error.description.contains("DBUS_SESSION_BUS_ADDRESS"))
            }
        }
    }

    @Test("NT-2: a later usable entry of a ;-separated address is used after an unusable one")
    func laterAddressEntryIsUsed() throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        let address = "tcp:host=localhost,port=1;unix:path=\(bus.folder)/missing;\(bus.address)"
        let client = try DesktopNotifications(address: address) { _ in }
        client.close()
        client.close()  // idempotent
    }

    @Test("NT-2: a unix:abstract= address reaches the bus listening in the abstract namespace")
    func abstractAddress() throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        try bus.startServer()
        let client = try DesktopNotifications(address: "unix:abstract=\(bus.abstractName),guid=00") { _ in }
        defer { client.close() }
        #expect(try client.serverInformation(timeout: .seconds(10)).name == "offstage-test-server")
    }

    @Test("NT-2: the bus dying fails the pending Notify and reports .disconnected; later calls throw")
    func busDeathIsReported() throws {
        try withBus { bus, client, log in
            // The server never answers this one: it is still pending when the bus goes.
            try client.notify(token: 9, DesktopNotification(summary: "hang"))
            #expect(PrivateSessionBus.waitFor(timeout: .seconds(20)) { bus.records().isEmpty ? nil : true } == true)
            bus.stopBus()
            let reason = log.first { event -> String? in
                if case .disconnected(let reason) = event { reason } else { nil }
            }
            #expect(reason != nil, "events: \(log.all)")
            let events = log.all
            let failed = events.firstIndex { if case .failed(9, _) = $0 { true } else { false } }
            let disconnected = events.firstIndex { if case .disconnected = $0 { true } else { false } }
            #expect(failed != nil && disconnected != nil && failed! < disconnected!, "events: \(events)")
            #expect(throws: DesktopNotificationsError.self) {
                try client.notify(token: 10, DesktopNotification(summary: "x"))
            }
        }
    }

    @Test("NT-2: close() fails the unanswered Notify before it returns, sends no .disconnected, and is idempotent")
    func closeEndsQuietly() throws {
        try withBus { bus, client, log in
            try client.notify(token: 3, DesktopNotification(summary: "hang"))
            #expect(PrivateSessionBus.waitFor(timeout: .seconds(20)) { bus.records().isEmpty ? nil : true } == true)
            client.close()
            client.close()
            #expect(log.all.count == 1, "events: \(log.all)")
            guard case .failed(3, let message)? = log.all.first else {
                Issue.record("events: \(log.all)")
                return
            }
            #expect(message.contains("closed by this client"))
            #expect(throws: DesktopNotificationsError.self) { try client.close(id: 1) }
        }
    }

    // MARK: - A bus that misbehaves

    @Test("NT-2: a bus that refuses the authentication makes init throw .authenticationRefused")
    func authenticationRefused() throws {
        let bus = try ScriptedBus(.reject)
        defer { bus.stop() }
        #expect {
            _ = try DesktopNotifications(address: bus.address) { _ in }
        } throws: { error in
            guard case .authenticationRefused(let reason) = error as? DesktopNotificationsError else { return false }
            return reason.contains("REJECTED EXTERNAL")
                && "\(error)".hasPrefix("authentication refused by the bus")
        }
    }

    @Test("NT-2: a bus that never answers the handshake makes init throw .timedOut, not hang")
    func silentBusTimesOut() throws {
        let bus = try ScriptedBus(.silent)
        defer { bus.stop() }
        let start = ContinuousClock.now
        #expect {
            _ = try DesktopNotifications(address: bus.address, timeout: .milliseconds(300)) { _ in }
        } throws: { error in
            (error as? DesktopNotificationsError) == .timedOut(method: "AUTH EXTERNAL", timeout: .milliseconds(300))
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test("NT-2: a connection that ends during the setup makes init throw, and no event is sent")
    func endDuringSetupIsThrown() throws {
        // Only Hello is answered; the first AddMatch meets a hang-up.
        let bus = try ScriptedBus(.afterSetup(calls: 1, bytes: []))
        defer { bus.stop() }
        bus.sendBytes()
        let log = DesktopEventLog()
        #expect(throws: DesktopNotificationsError.self) {
            _ = try DesktopNotifications(address: bus.address, events: log.handler)
        }
        #expect(log.all.isEmpty, "events: \(log.all)")
    }

    @Test("NT-2: bytes that are no D-Bus message end the connection with .disconnected naming them, no crash")
    func garbageFromTheBusDisconnects() throws {
        let oversized: [UInt8] = [0x6c, 2, 0, 1, 0, 0, 0, 0x10, 1, 0, 0, 0, 0, 0, 0, 0]
        let garbage = Array("XXXXXXXXXXXXXXXXXXXXXXXX".utf8)
        for (bytes, fragment) in [(garbage, "byte order 0x58"), (oversized, "the limit is")] {
            // Hello and the two AddMatch calls are answered, then the bytes come.
            let bus = try ScriptedBus(.afterSetup(calls: 3, bytes: bytes))
            defer { bus.stop() }
            let log = DesktopEventLog()
            let client = try DesktopNotifications(address: bus.address, events: log.handler)
            defer { client.close() }
            bus.sendBytes()
            let reason = log.first { event -> String? in
                if case .disconnected(let reason) = event { reason } else { nil }
            }
            #expect(reason?.hasPrefix("malformed message from the bus: ") == true, "events: \(log.all)")
            #expect(reason?.contains(fragment) == true, "events: \(log.all)")
        }
    }
}
