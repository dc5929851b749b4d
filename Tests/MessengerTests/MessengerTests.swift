import Foundation
import Offstage
import OffstageTesting
import Testing

@testable import Messenger

/// The Messenger example's own tests, as its developer would write them with the test kit: its real delegate and
/// `Info.plist`, pushes sent as its server sends them (APNs' provider API, through the same gateway rules as
/// `offstaged`), on virtual time, with no daemon (SPEC NT-3, NT-4).
@Suite("Messenger, tested with OffstageTesting (KIT-1, NT-3, NT-4)")
@MainActor
struct MessengerTests {
    static let infoPlist = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/Messenger/Info.plist")

    static func background(_ message: String) -> String { #"{"aps":{"content-available":1},"message":"\#(message)"}"# }

    /// The messenger installed, opened (it registers at launch) and left: suspended.
    static func suspendedMessenger() async throws -> (TestDevice, TestApp) {
        let device = await TestDevice()
        let app = try device.install(infoPlist: infoPlist) { MessengerDelegate() }
        try await device.open(app)
        try await device.home()
        // Suspended once its time to finish leaving (a second) is over.
        try await device.advance(by: .seconds(2))
        #expect(app.isSuspended)
        return (device, app)
    }

    @Test("NT-3, NT-4: it registers at launch; its server's background push wakes it suspended, it posts the message and completes with new data, and it is suspended again")
    func backgroundPushWakesIt() async throws {
        let (device, app) = try await Self.suspendedMessenger()
        let token = try #require(app.pushToken, "registered at launch")
        #expect(token.count == 64)
        let response = try await device.sendPush(Self.background("m-1"), to: app)
        #expect(response.isAccepted, "\(response)")
        #expect(device.pushOutcome(response.apnsID) == "handled: newData")
        #expect(app.callbacks.last == .other("remoteNotification"))
        #expect(device.shownNotifications.map(\.body) == ["New message m-1"], "shown at once")
        try await device.advance(by: .seconds(2))
        #expect(app.isSuspended, "suspended again once its handler completed")
        // Registering again at the next launch gives the same token.
        try await device.forceQuit(app)
        try await device.open(app)
        #expect(app.pushToken == token)
    }

    @Test("NT-4: over its budget of three wakes the next push is held; a newer one replaces it (coalesced); the newer one is handled when a wake returns, 20 minutes on")
    func heldOverItsBudget() async throws {
        let (device, app) = try await Self.suspendedMessenger()
        for message in ["m-1", "m-2", "m-3"] {
            let response = try await device.sendPush(Self.background(message), to: app)
            #expect(device.pushOutcome(response.apnsID) == "handled: newData", "\(message)")
        }
        let held = try await device.sendPush(Self.background("m-4"), to: app)
        #expect(held.isAccepted && device.pushOutcome(held.apnsID) == "held", "accepted by the gateway, held on the device")
        let newer = try await device.sendPush(Self.background("m-5"), to: app)
        #expect(device.pushOutcome(held.apnsID) == "coalesced: \(newer.apnsID)")
        #expect(device.pushOutcome(newer.apnsID) == "held")
        try await device.advance(by: .seconds(19 * 60))
        #expect(device.pushOutcome(newer.apnsID) == "held", "not before a wake returns")
        try await device.advance(by: .seconds(60))
        #expect(device.pushOutcome(newer.apnsID) == "handled: newData")
        #expect(device.shownNotifications.map(\.body) == ["m-1", "m-2", "m-3", "m-5"].map { "New message \($0)" })
    }

    @Test("NT-3: the gateway refuses what APNs refuses, and the device gets nothing: a token never issued, a payload over 4 KB, a background push at priority 10, another app's topic")
    func badPushesRefused() async throws {
        let (device, app) = try await Self.suspendedMessenger()
        let token = try #require(app.pushToken)
        let unknown = try await device.sendPush(
            Self.background("x"), toDeviceToken: String(repeating: "0", count: 64), headers: ["apns-topic": app.id])
        #expect(unknown.status == 400 && unknown.reason == "BadDeviceToken", "\(unknown)")
        let large = #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "a", count: 4_100) + #""}"#
        let tooLarge = try await device.sendPush(large, to: app)
        #expect(tooLarge.status == 413 && tooLarge.reason == "PayloadTooLarge", "\(tooLarge)")
        let urgent = try await device.sendPush(Self.background("x"), to: app, headers: ["apns-priority": "10"])
        #expect(urgent.status == 400 && urgent.reason == "BadPriority", "\(urgent)")
        let other = try await device.sendPush(
            Self.background("x"), toDeviceToken: token, headers: ["apns-topic": "com.example.other"])
        #expect(other.status == 400 && other.reason == "DeviceTokenNotForTopic", "\(other)")
        #expect(app.callbacks.filter { $0 == .other("remoteNotification") }.isEmpty && device.shownNotifications.isEmpty)
        #expect(app.isSuspended)
    }

    @Test("NT-4: force-quit, the messenger is not woken for background pushes until the user opens it again")
    func forceQuitStopsPushes() async throws {
        let (device, app) = try await Self.suspendedMessenger()
        try await device.forceQuit(app)
        let response = try await device.sendPush(Self.background("m-1"), to: app)
        #expect(response.isAccepted)
        #expect(device.pushOutcome(response.apnsID)?.hasPrefix("not-delivered") == true, "\(device.pushOutcome(response.apnsID) ?? "nil")")
        #expect(!app.isRunning)
    }
}

extension MessengerTests {
    @Test("NT-3, NT-4: its server's Web Push message, encrypted and VAPID-signed, wakes the suspended messenger, which reads the device-decrypted body and posts the message; after the app is uninstalled the endpoint answers 410")
    func webPushWakesIt() async throws {
        let (device, app) = try await Self.suspendedMessenger()
        let response = try await device.sendWebPush(Data(#"{"message":"m-43"}"#.utf8), to: app)
        #expect(response.status == 201, "\(response)")
        #expect(device.pushOutcome(response.apnsID) == "handled: newData")
        #expect(device.shownNotifications.map(\.body) == ["New message m-43"])
        try await device.uninstall(app)
        await #expect(throws: TestKitError.self) { try await device.sendWebPush(Data("{}".utf8), to: app) }
    }
}
