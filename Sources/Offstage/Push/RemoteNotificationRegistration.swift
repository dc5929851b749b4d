import Foundation
import OffstageProtocol

/// Where the app's server sends the app's pushes: what `Application.registerForRemoteNotifications()` returns
/// (SPEC NT-3).
///
/// Hand ``token`` and ``gateway`` to your server. It sends as to APNs: `POST <gateway>/3/device/<token>` with
/// `apns-topic: <topic>`, `apns-push-type`, and a provider token (an ES256 JWT signed with a key registered by
/// `offstage push-keys add`). The token stays the app's until it is uninstalled or
/// `Application.unregisterForRemoteNotifications()` is called; registering again returns the same one.
public struct RemoteNotificationRegistration: Sendable, Hashable, CustomStringConvertible {
    /// The device token as APNs writes it: 64 lowercase hexadecimal digits (what an app server stores).
    public var token: String
    /// The device token's 32 bytes (the `Data` that `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`
    /// is given on iOS).
    public var deviceToken: [UInt8]
    /// The gateway's provider API: `https://host:port`, or `http://host:port` (HTTP/2 without TLS, on loopback).
    public var gateway: URL
    /// The `apns-topic` the server sends with: the app's id.
    public var topic: String

    /// A registration from its parts; nil when `token` is not 64 hexadecimal digits or `gateway` is not a URL.
    public init?(token: String, gateway: String, topic: String) {
        guard let bytes = Self.bytes(ofHex: token), bytes.count == 32, let url = URL(string: gateway),
            url.scheme == "http" || url.scheme == "https", url.host != nil
        else { return nil }
        self.token = token.lowercased()
        self.deviceToken = bytes
        self.gateway = url
        self.topic = topic
    }

    /// `token=<64 hex> gateway=<url> topic=<app>`.
    public var description: String { "token=\(token) gateway=\(gateway.absoluteString) topic=\(topic)" }

    /// The bytes of an even number of hexadecimal digits, or nil.
    static func bytes(ofHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Registers through `link` and reads the daemon's answer.
    static func register(link: DaemonLink) throws(RemoteNotificationError) -> RemoteNotificationRegistration {
        let message = try link.registerForRemoteNotifications()
        guard let registration = RemoteNotificationRegistration(
            token: message.token, gateway: message.gateway, topic: message.topic)
        else {
            throw RemoteNotificationError(
                .unavailable,
                "the daemon answered a registration this SDK cannot read (token \(message.token.debugDescription), "
                    + "gateway \(message.gateway.debugDescription))",
                fix: "use an SDK and an offstaged of the same version")
        }
        RemoteNotificationState.shared.registered(registration)
        return registration
    }
}

/// The `io.offstage.Push` calls (SPEC NT-3, NT-4).
extension DaemonLink {
    func registerForRemoteNotifications() throws(RemoteNotificationError) -> PushInterface.RegistrationMessage {
        do {
            return try request(PushInterface.Method.register, NoParameters(), as: PushInterface.RegisterReply.self)
                .registration
        } catch {
            throw RemoteNotificationError(error)
        }
    }

    func unregisterForRemoteNotifications() throws(RemoteNotificationError) {
        do {
            _ = try request(PushInterface.Method.unregister, NoParameters(), as: EmptyReply.self)
        } catch {
            throw RemoteNotificationError(error)
        }
    }

    func completeRemoteNotification(run: UInt64, result: BackgroundFetchResult) {
        do {
            _ = try request(
                PushInterface.Method.completeRemoteNotification,
                PushInterface.CompleteParameters(run: run, result: result.rawValue), as: EmptyReply.self)
        } catch {
            // A restarted daemon has cut the run off already: there is nothing left to complete.
            reportToDeveloper("could not report the completion of remote-notification run \(run): \(error)")
        }
    }
}
