import ArgumentParser
import Dispatch
import Foundation
import OffstageProtocol
import OffstagePush
import Synchronization

// `offstage push`, `push-keys` and `push-status` (one file each, with their shared checks in PushArguments.swift): the push
// gateway as an app server and its operator see it
// (SPEC NT-3..5, CLI-1). This file does not import OffstageCore: its `PushType` would hide the gateway's.

/// What `offstage push` checked before talking to anyone.
struct PushPlan {
    var payload: Data
    var privateKeyPEM: String
    var keyID: String
    var teamID: String
    var type: PushType
    var priority: PushPriority
    var address: GatewayAddress?
    var trustRootsPEM: String?
}

/// What became of a push (`--json`).
struct PushOutcome: Encodable {
    var app: String
    var gateway: String
    var token: String
    var topic: String
    var status: Int?
    var apnsId: String?
    var reason: String?
    var message: String?
    var fix: String?
}

/// A push gateway's address.
struct GatewayAddress: Equatable {
    var host: String
    var port: Int
    var tls: Bool

    var url: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return "\(tls ? "https" : "http")://\(shown):\(port)"
    }
}

extension ControlClient {
    /// A `io.offstage.PushControl` call; a daemon without that interface is said in words, with the fix.
    func pushCall<Parameters: Encodable, Reply: Decodable>(
        _ method: String, _ parameters: Parameters, as type: Reply.Type = EmptyReply.self
    ) throws -> Reply {
        do {
            return try call(method, parameters, as: type)
        } catch let error as VarlinkError where error.name == VarlinkError.Name.interfaceNotFound {
            throw PushFailure(
                "the daemon does not serve \(PushControlInterface.name) (an offstaged without the push gateway); "
                    + "update offstaged")
        }
    }
}

/// A failure of the push verbs that is not the daemon's: one line, exit 1.
struct PushFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The push verbs' checks and explanations, pure functions of their arguments.
enum PushArguments {
    /// A value given as an option, else in the environment, else a usage error naming both.
    static func required(_ option: String?, _ environment: String?, _ name: String, _ variable: String) throws -> String {
        if let option, !option.isEmpty { return option }
        if let environment, !environment.isEmpty { return environment }
        throw ValidationError("\(name) is missing; give \(name) or set \(variable)")
    }

    /// The payload's bytes and its JSON object: the file at `argument` if there is one, else `argument` as JSON text.
    static func payload(
        _ argument: String, fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) },
        read: (String) -> Data? = { FileManager.default.contents(atPath: $0) }
    ) throws -> (Data, [String: Any]) {
        let data: Data
        let what: String
        if fileExists(argument) {
            guard let contents = read(argument) else {
                throw ValidationError("--payload \(argument.debugDescription) cannot be read; check its permissions")
            }
            (data, what) = (contents, "the file \(argument.debugDescription)")
        } else {
            (data, what) = (Data(argument.utf8), "--payload")
        }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            let hint = argument.hasPrefix("{") || argument.hasPrefix("[") ? "" : " (no such file either)"
            throw ValidationError(
                "\(what) is not JSON\(hint); give a file's path or JSON text such as "
                    + #"'{"aps":{"alert":"Hello"}}'"#)
        }
        guard let object = parsed as? [String: Any] else {
            throw ValidationError(
                "\(what) is JSON but not an object; the payload is an object with an aps dictionary, such as "
                    + #"'{"aps":{"content-available":1}}'"#)
        }
        guard object["aps"] is [String: Any] else {
            throw ValidationError(
                "\(what) has no aps dictionary; add one, such as \"aps\":{\"alert\":\"Hello\"} for an alert or "
                    + "\"aps\":{\"content-available\":1} to wake the app")
        }
        return (data, object)
    }

    /// `--type`, or the type the payload's `aps` implies: alert when it shows something, else background.
    static func pushType(_ argument: String?, payload: [String: Any]) throws -> PushType {
        if let argument {
            guard let type = PushType(rawValue: argument) else {
                throw ValidationError(
                    "--type \(argument.debugDescription) is not a push type; give one of "
                        + PushType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return type
        }
        let aps = payload["aps"] as? [String: Any] ?? [:]
        return aps["alert"] != nil || aps["sound"] != nil || aps["badge"] != nil ? .alert : .background
    }

    /// `--priority`, or 5 for a background push and 10 for any other.
    static func priority(_ argument: Int?, for type: PushType) throws -> PushPriority {
        guard let argument else { return type == .background ? .powerConsidered : .immediate }
        guard let priority = PushPriority(rawValue: argument) else {
            throw ValidationError("--priority must be 10, 5 or 1; got \(argument)")
        }
        if type == .background, priority == .immediate {
            throw ValidationError("a background push must have --priority 5 (or 1); leave --priority out for 5")
        }
        return priority
    }

    /// The private key PEM at `path`, checked to be a P-256 key.
    static func privateKey(at path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError(
                "--key \(path.debugDescription) cannot be read; give the private key file `offstage push-keys add "
                    + "--generate FILE` wrote (or the .p8 of a registered key)")
        }
        guard (try? ProviderKeyPair.publicKeyPEM(ofPrivateKeyPEM: text)) != nil else {
            throw ValidationError(
                "--key \(path.debugDescription) is not a P-256 private key in PEM; give the .p8 file of a key "
                    + "registered with `offstage push-keys add`")
        }
        return text
    }

    /// Refuses a device token that is not 64 hexadecimal digits.
    static func checkToken(_ token: String) throws {
        guard token.utf8.count == 64, token.allSatisfy(\.isHexDigit) else {
            throw ValidationError(
                "--token must be 64 hexadecimal digits; got \(token.utf8.count) characters; leave it out to use the "
                    + "app's token")
        }
    }

    /// `http://host:port` (h2c) or `https://host:port` (TLS); the port defaults to 80 or 443.
    static func gatewayAddress(_ text: String) throws -> GatewayAddress {
        try gatewayAddress(text, option: "--gateway")
    }

    static func gatewayAddress(_ text: String, option: String) throws -> GatewayAddress {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", var host = components.host, !host.isEmpty,
            components.path.isEmpty || components.path == "/"
        else {
            throw ValidationError(
                "\(option) \(text.debugDescription) is not a gateway address; give http://host:port (h2c) or "
                    + "https://host:port (TLS), as `offstage push-status` shows it")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return GatewayAddress(host: host, port: components.port ?? (scheme == "https" ? 443 : 80), tls: scheme == "https")
    }

    /// A key id as Apple makes them: 10 random uppercase letters and digits.
    static func newKeyID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<10).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// Refuses a key id that is not 10 letters and digits (the JWT's kid).
    static func checkKeyID(_ id: String) throws {
        guard id.count == 10, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw ValidationError(
                "--key-id \(id.debugDescription) is not 10 letters and digits; leave it out to get a new one")
        }
    }

    /// What a refusal means and what to do, by APNs reason.
    static func explain(_ response: APNsResponse) -> (message: String, fix: String) {
        let reason = response.apnsReason
        let fix: String =
            switch reason {
            case .badDeviceToken, .missingDeviceToken:
                "use the app's current token (`offstage push-status APP_ID`), or leave --token out"
            case .deviceTokenNotForTopic:
                "the token is another app's; send to the app it was issued to, or leave --token out"
            case .unregistered, .expiredToken:
                "the app was uninstalled or unregistered; stop sending to this token, and use the new one once the "
                    + "app registers again"
            case .badTopic, .missingTopic: "give the app's id as APP_ID"
            case .topicDisallowed:
                "the key is limited to other apps; add this one with `offstage push-keys add … --topic APP_ID`"
            case .invalidProviderToken, .badEnvironmentKeyInToken, .unrelatedKeyIdInToken:
                "check that --key-id and --team-id are a key of `offstage push-keys list` and --key is its private key"
            case .expiredProviderToken: "check this machine's clock: provider tokens are signed with the time now"
            case .missingProviderToken: "give --key, --key-id and --team-id"
            case .badPriority: "a background push must have --priority 5"
            case .payloadEmpty: #"the payload must be a JSON object with an aps dictionary, such as {"aps":{"alert":"Hi"}}"#
            case .payloadTooLarge: "keep the payload within 4096 bytes (5120 for voip): send an id and fetch the rest"
            case .badCollapseId: "give --collapse-id of 1 to 64 bytes"
            case .badExpirationDate: "give --expiration as seconds from now, or 0"
            case .badMessageId: "give --apns-id as a UUID, or leave it out"
            case .invalidPushType: "give --type alert, background or another APNs push type"
            case .tooManyRequests: "this device token gets too many pushes: wait a little and send again"
            case .internalServerError, .serviceUnavailable, .shutdown:
                "the gateway could not take the push; send it again later, and see `offstage log`"
            default: "see the APNs documentation of this reason"
            }
        var message = response.reason ?? "no reason given"
        if let timestamp = response.timestamp {
            message += " since \(ISO8601DateFormatter().string(from: timestamp))"
        }
        return (message, fix)
    }
}

/// Runs async work from a verb's synchronous `run`, waiting at most `timeout`.
enum Blocking {
    static func run<Value: Sendable>(
        timeout: Duration, _ body: @escaping @Sendable () async throws -> Value
    ) throws -> Value {
        let box = Mutex<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let work = Task {
            do {
                let value = try await body()
                box.withLock { $0 = .success(value) }
            } catch {
                box.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        let seconds = Double(timeout.components.seconds)
        guard done.wait(timeout: .now() + seconds) == .success else {
            work.cancel()
            throw PushFailure("the push gateway did not answer within \(Int(seconds)) s; check that it runs")
        }
        return try box.withLock { $0! }.get()
    }
}
