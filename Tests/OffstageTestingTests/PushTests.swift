import Foundation
import Offstage
import OffstageTesting
import Testing

/// Remote notifications through the kit (SPEC NT-3, NT-4): the app's own registration, its server's pushes through the
/// gateway's rules, and its handler; and the kit's answers to bad use.
@Suite("OffstageTesting: remote notifications (KIT-2, NT-3, NT-4)")
@MainActor
struct PushTests {
    /// Registers at launch when told to; its handler returns `result` after `handlerWork` (real time), or never.
    final class PushDelegate: ApplicationDelegate {
        let registers: Bool
        let neverReturns: Bool
        var received: [String] = []

        init(registers: Bool = true, neverReturns: Bool = false) {
            self.registers = registers
            self.neverReturns = neverReturns
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            if registers { application.registerForRemoteNotifications() }
            return true
        }

        func application(
            _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable]
        ) async throws -> BackgroundFetchResult {
            received.append(userInfo["message"] as? String ?? "?")
            if neverReturns { try await Task.sleep(for: .seconds(3600)) }
            return .newData
        }
    }

    static let id = "com.example.pushes"
    static let background = #"{"aps":{"content-available":1},"message":"m-1"}"#

    static func install(_ device: TestDevice, _ delegate: @escaping @MainActor () -> any ApplicationDelegate) throws -> TestApp {
        try device.install(bundleIdentifier: id, backgroundModes: ["remote-notification"], delegate: delegate)
    }

    @Test("KIT-2: a push to an app that never registered is refused by the kit, naming the registration it lacks")
    func unregisteredAppHasNoToken() async throws {
        let device = await TestDevice()
        let app = try Self.install(device) { PushDelegate(registers: false) }
        try await device.open(app)
        #expect(app.pushToken == nil)
        await #expect {
            try await device.sendPush(Self.background, to: app)
        } throws: { error in
            "\(error)".contains("has not registered for remote notifications") && "\(error)".contains("registerForRemoteNotifications()")
        }
    }

    @Test("NT-3: after the app unregisters, its server's push to the old token is answered 410 Unregistered, and it registers again with a new token")
    func unregisteredTokenIsGone() async throws {
        let device = await TestDevice()
        let app = try Self.install(device) { PushDelegate() }
        try await device.open(app)
        let token = try #require(app.pushToken)
        try await Application.shared.unregisterForRemoteNotifications()
        try await device.runUntilIdle()
        #expect(app.pushToken == nil)
        let gone = try await device.sendPush(Self.background, toDeviceToken: token, headers: ["apns-topic": Self.id])
        #expect(gone.status == 410 && gone.reason == "Unregistered", "\(gone)")
        let again = try await Application.shared.registerForRemoteNotifications()
        #expect(again.token != token && app.pushToken == again.token)
    }

    @Test("KIT-6: a remote-notification handler that never returns fails the wait, naming the push, instead of hanging the test")
    func handlerThatNeverReturns() async throws {
        let device = await TestDevice()
        device.handlerTimeout = .milliseconds(300)
        let app = try Self.install(device) { PushDelegate(neverReturns: true) }
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(2))
        await #expect {
            try await device.sendPush(Self.background, to: app)
        } throws: { error in
            guard case TestKitError.handlerDidNotReturn(let callback, _) = error else { return false }
            return callback.hasPrefix("the remote-notification handler of push ")
        }
    }

    @Test("NT-4: an alert push to the suspended app is shown to the user without waking it")
    func alertPushIsShown() async throws {
        let device = await TestDevice()
        let app = try Self.install(device) { PushDelegate() }
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(2))
        let response = try await device.sendPush(#"{"aps":{"alert":{"title":"Ada","body":"Lunch?"}}}"#, to: app)
        #expect(device.pushOutcome(response.apnsID) == "shown")
        #expect(device.shownNotifications.map(\.title) == ["Ada"])
        #expect(app.isSuspended && !app.callbacks.contains(.other("remoteNotification")))
    }
}

extension PushTests {
    /// Subscribes to Web Push at launch, restricted to `key` when given.
    final class WebPushDelegate: ApplicationDelegate {
        let key: String?
        var endpoint: URL?

        init(key: String?) { self.key = key }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            Task {
                let key = self.key.flatMap { Data(base64URL: $0) }
                endpoint = try? await application.registerForWebPush(applicationServerKey: key).endpoint
            }
            return true
        }

        func application(
            _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable]
        ) async throws -> BackgroundFetchResult {
            WebPushMessage(userInfo: userInfo) == nil ? .failed : .newData
        }
    }

    @Test("NT-3: a subscription restricted to the server's key takes its signed messages and refuses unsigned ones; unsubscribed, the endpoint answers 410 SubscriptionGone")
    func webPushSubscription() async throws {
        let device = await TestDevice()
        let key = try await device.webPushApplicationServerKey
        let app = try Self.install(device) { WebPushDelegate(key: key) }
        try await device.open(app)
        let endpoint = try #require((app.delegate as? WebPushDelegate)?.endpoint)
        #expect(endpoint.absoluteString.hasPrefix("https://push.offstage-testing.invalid/push/"))

        let signed = try await device.sendWebPush(Data("hello".utf8), to: app, headers: ["urgency": "high"])
        #expect(signed.status == 201 && device.pushOutcome(signed.apnsID) == "handled: newData", "\(signed)")
        let unsigned = try await device.sendWebPush(Data("hello".utf8), to: app, headers: ["authorization": ""])
        #expect(unsigned.status == 401 || unsigned.status == 403, "\(unsigned)")
        #expect(unsigned.reason == "MissingAuthorization", "\(unsigned)")

        try await Application.shared.unregisterForWebPush()
        try await device.runUntilIdle()
        await #expect(throws: TestKitError.self) { try await device.sendWebPush(Data("hello".utf8), to: app) }
    }
}

extension Data {
    /// Base64url, with or without padding, decoded.
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
