import Foundation
import Logging

/// The device link as a route (decision 0035): devices of a multi-device gateway pull their pushes and register their
/// tokens and subscriptions here.
///
/// - `POST /device/v1/pull` with a ``DeviceLinkPull``: answers a ``DeviceLinkBatch``.
/// - `PUT /device/v1/registrations` with ``DeviceRegistrations``: answers 204.
///
/// Every request carries `authorization: Basic <base64 of device:secret>`, the secret the device was enrolled with.
/// Errors are JSON `{"reason","message"}`: 400 `BadRequest`, 401 `Unauthorized`, 404 `BadPath`, 405
/// `MethodNotAllowed`, 409 `Conflict` (a token of another device), 413 `PayloadTooLarge`, 500 `InternalServerError`.
public struct DeviceLinkRoute: PushRoute {
    /// The longest a pull may wait.
    public static let longestWait: Double = 60

    private let backend: any DeviceLinkBackend
    private let logger: Logger

    /// Creates the route over `backend`.
    public init(backend: any DeviceLinkBackend, logger: Logger = Logger(label: "offstage.push.device-link")) {
        self.backend = backend
        self.logger = logger
    }

    /// `/device/`.
    public var pathPrefix: String { "/device/" }

    /// 4 MiB: the registrations of a device with thousands of apps, or the acknowledgements of a large batch.
    public var maximumBodyBytes: Int { 4 << 20 }

    /// 413 `PayloadTooLarge`.
    public func bodyTooLarge(_ request: PushHTTPRequest) -> PushHTTPResponse {
        Self.refusal(413, "PayloadTooLarge", "The body is over \(maximumBodyBytes) bytes; register in smaller parts.")
    }

    /// Answers a pull or a registration.
    public func handle(_ request: PushHTTPRequest) async -> PushHTTPResponse {
        let path = request.path.prefix { $0 != "?" }
        let method: String
        switch path {
        case "/device/v1/pull": method = "POST"
        case "/device/v1/registrations": method = "PUT"
        default:
            return Self.refusal(
                404, "BadPath", "No device link resource is at \(request.path.prefix(200)); use /device/v1/pull or /device/v1/registrations.")
        }
        guard request.method == method else {
            return Self.refusal(405, "MethodNotAllowed", "\(path) takes \(method), not \(request.method.prefix(20)).", allow: method)
        }
        let device: String
        switch await authenticate(request) {
        case .device(let name): device = name
        case .refused(let refusal): return refusal
        }
        do {
            if method == "POST" {
                return try await pull(request, device: device)
            }
            return try await register(request, device: device)
        } catch let error as DeviceLinkError {
            return Self.refusal(409, "Conflict", error.description)
        } catch {
            logger.error("device link request failed", metadata: ["device": "\(device)", "error": "\(error)"])
            return Self.refusal(500, "InternalServerError", "The gateway could not answer: \(error)")
        }
    }

    private func pull(_ request: PushHTTPRequest, device: String) async throws -> PushHTTPResponse {
        let pull: DeviceLinkPull
        do {
            pull = try JSONDecoder().decode(DeviceLinkPull.self, from: request.body)
        } catch {
            return Self.refusal(400, "BadRequest", "The body is not a pull {\"acks\":[…],\"waitSeconds\":…}: \(error)")
        }
        guard pull.waitSeconds.isFinite, (0...Self.longestWait).contains(pull.waitSeconds) else {
            return Self.refusal(400, "BadRequest", "waitSeconds \(pull.waitSeconds) is not from 0 to \(Int(Self.longestWait)); send e.g. 25.")
        }
        let pushes = try await backend.pull(
            device: device, acknowledging: pull.acks, wait: .milliseconds(Int64(pull.waitSeconds * 1000)))
        return PushHTTPResponse(
            status: 200, headers: [PushHeaderField("content-type", "application/json")],
            body: try JSONEncoder().encode(DeviceLinkBatch(pushes: pushes)))
    }

    private func register(_ request: PushHTTPRequest, device: String) async throws -> PushHTTPResponse {
        let registrations: DeviceRegistrations
        do {
            registrations = try JSONDecoder().decode(DeviceRegistrations.self, from: request.body)
        } catch {
            return Self.refusal(400, "BadRequest", "The body is not registrations {\"tokens\":[…],\"subscriptions\":[…]}: \(error)")
        }
        if let problem = Self.problem(registrations) { return Self.refusal(400, "BadRequest", problem) }
        try await backend.register(registrations, device: device)
        return PushHTTPResponse(status: 204)
    }

    /// What is wrong with `registrations`, or nil.
    static func problem(_ registrations: DeviceRegistrations) -> String? {
        for token in registrations.tokens {
            guard token.token.utf8.count == 64, token.token.utf8.allSatisfy({ $0.isLowercaseHexDigit }) else {
                return "The token \(token.token.prefix(80)) is not 64 lowercase hexadecimal digits."
            }
            guard !token.app.isEmpty, token.app.utf8.count <= 255 else { return "Token \(token.token) names no app (or one over 255 bytes)." }
        }
        for subscription in registrations.subscriptions {
            guard (16...128).contains(subscription.id.utf8.count), Base64URL.decode(subscription.id) != nil else {
                return "The subscription id \(subscription.id.prefix(80)) is not 16 to 128 base64url characters."
            }
            guard !subscription.app.isEmpty, subscription.app.utf8.count <= 255 else {
                return "Subscription \(subscription.id) names no app (or one over 255 bytes)."
            }
            if let key = subscription.applicationServerKey, !VAPIDCredentials.isPublicKey(Base64URL.decode(key) ?? Data()) {
                return "The applicationServerKey of subscription \(subscription.id) is not a 65-byte uncompressed P-256 key in base64url."
            }
        }
        return nil
    }

    private enum Authentication {
        case device(String)
        case refused(PushHTTPResponse)
    }

    private func authenticate(_ request: PushHTTPRequest) async -> Authentication {
        let values = request.values(of: "authorization")
        guard values.count == 1, let credentials = Self.basicCredentials(values[0]) else {
            return .refused(
                Self.refusal(
                    401, "Unauthorized", "Send authorization: Basic with the device name and the secret it was enrolled with (offstage-push devices add).",
                    challenge: true))
        }
        do {
            guard try await backend.authenticate(device: credentials.device, secret: credentials.secret) else {
                return .refused(
                    Self.refusal(
                        401, "Unauthorized", "Device \(credentials.device.prefix(80)) is not enrolled with that secret; enroll it again and use the new secret.",
                        challenge: true))
            }
        } catch {
            return .refused(Self.refusal(500, "InternalServerError", "The device could not be checked: \(error)"))
        }
        return .device(credentials.device)
    }

    /// The device and secret of `Basic <base64(device:secret)>`, or nil when the value is not that.
    static func basicCredentials(_ value: String) -> (device: String, secret: String)? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic", let data = Data(base64Encoded: String(parts[1])),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        let device = String(text[..<colon])
        let secret = String(text[text.index(after: colon)...])
        guard !device.isEmpty, device.utf8.count <= 255, !secret.isEmpty else { return nil }
        return (device, secret)
    }

    /// The `authorization` value for `device` and `secret`.
    public static func authorization(device: String, secret: String) -> String {
        "Basic \(Data("\(device):\(secret)".utf8).base64EncodedString())"
    }

    static func refusal(_ status: Int, _ reason: String, _ message: String, allow: String? = nil, challenge: Bool = false) -> PushHTTPResponse {
        var headers = [PushHeaderField("content-type", "application/json")]
        if let allow { headers.append(PushHeaderField("allow", allow)) }
        if challenge { headers.append(PushHeaderField("www-authenticate", "Basic realm=\"offstage-push\"")) }
        return PushHTTPResponse(
            status: status, headers: headers, body: WebPushRefusal.errorBody(reason: reason, message: message))
    }
}

extension UInt8 {
    fileprivate var isLowercaseHexDigit: Bool { (0x30...0x39).contains(self) || (0x61...0x66).contains(self) }
}
