import ArgumentParser
import Dispatch
import Foundation
import OffstageProtocol
import OffstagePush
import Synchronization

// `offstage push`, `push-keys` and `push-status`: the push gateway as an app server and its operator see it
// (SPEC NT-3..5, CLI-1). This file does not import OffstageCore: its `PushType` would hide the gateway's.

/// `offstage push APP_ID …`: sends a push through the gateway's provider API, exactly as an app server would.
struct PushSend: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a push to an app through the gateway's APNs provider API, as the app's server would.",
        discussion: """
            The device token and the gateway's address come from the daemon (the app must have registered for \
            remote notifications) unless --token and --gateway give them. The push is signed with a provider token \
            (an ES256 JWT) from --key, --key-id and --team-id, or $OFFSTAGE_PUSH_KEY, $OFFSTAGE_PUSH_KEY_ID and \
            $OFFSTAGE_PUSH_TEAM_ID; register the key first with `offstage push-keys add`. It goes over HTTP/2: \
            h2c for an http:// gateway, TLS for https:// (trusting --ca when given, else the system's roots).

            --payload is a file's path if that file exists, else the JSON text itself; it must be a JSON object with \
            an aps dictionary, for example '{"aps":{"content-available":1},"message":"m-42"}' (a background push \
            that wakes the app) or '{"aps":{"alert":{"title":"Hi","body":"Hello"}}}' (an alert). Without --type the \
            type is alert when aps has an alert, a sound or a badge, else background; without --priority it is 5 \
            for a background push and 10 otherwise.

            Prints the push's apns-id and status 200. A refusal prints the APNs reason (as a real server would get \
            it) and how to fix it, and exits 1; exit 69 when the gateway cannot be reached.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id (the apns-topic).", valueName: "APP_ID")) var app: String
    @Option(help: ArgumentHelp("The payload: a file, or JSON text.", valueName: "FILE|JSON")) var payload: String
    @Option(
        help: ArgumentHelp(
            "The provider key's private key, PEM (.p8) [default: $OFFSTAGE_PUSH_KEY].", valueName: "PRIVATE_KEY_FILE"))
    var key: String?
    @Option(
        name: .customLong("key-id"),
        help: ArgumentHelp("The key's id, the JWT's kid [default: $OFFSTAGE_PUSH_KEY_ID].", valueName: "ID"))
    var keyID: String?
    @Option(
        name: .customLong("team-id"),
        help: ArgumentHelp("The team, the JWT's iss [default: $OFFSTAGE_PUSH_TEAM_ID].", valueName: "TEAM"))
    var teamID: String?
    @Option(
        help: ArgumentHelp(
            "apns-push-type: alert, background, voip, location, complication, fileprovider, mdm, liveactivity, "
                + "pushtotalk, widgets or controls.", valueName: "TYPE"))
    var type: String?
    @Option(help: ArgumentHelp("apns-priority: 10 (at once), 5 (when convenient) or 1.", valueName: "10|5|1"))
    var priority: Int?
    @Option(
        name: .customLong("collapse-id"),
        help: ArgumentHelp("apns-collapse-id: a newer push with it replaces this one.", valueName: "ID"))
    var collapseID: String?
    @Option(
        help: ArgumentHelp(
            "Keep it for an offline device this many seconds; 0: deliver now or never.", valueName: "SECONDS|0"))
    var expiration: Int64?
    @Option(
        name: .customLong("apns-id"),
        help: ArgumentHelp("The push's apns-id; made by the gateway if left out.", valueName: "UUID"))
    var apnsID: String?
    @Option(help: ArgumentHelp("The device token (64 hex digits) instead of the daemon's.", valueName: "TOKEN"))
    var token: String?
    @Option(
        help: ArgumentHelp("The gateway (http://host:port or https://host:port) instead of the daemon's.", valueName: "URL"))
    var gateway: String?
    @Option(help: ArgumentHelp("The CA certificate (PEM) to trust for an https gateway.", valueName: "FILE")) var ca: String?

    mutating func validate() throws {
        _ = try plan()
    }

    /// Everything the push needs but the daemon's token and address, checked; throws a `ValidationError` (exit 64)
    /// naming the option and the fix.
    func plan(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PushPlan {
        if app.isEmpty { throw ValidationError("APP_ID is empty; give the app's id, as `offstage apps` lists it") }
        let (payloadData, object) = try PushArguments.payload(payload)
        let keyPath = try PushArguments.required(key, environment["OFFSTAGE_PUSH_KEY"], "--key", "OFFSTAGE_PUSH_KEY")
        let keyID = try PushArguments.required(self.keyID, environment["OFFSTAGE_PUSH_KEY_ID"], "--key-id", "OFFSTAGE_PUSH_KEY_ID")
        let teamID = try PushArguments.required(
            self.teamID, environment["OFFSTAGE_PUSH_TEAM_ID"], "--team-id", "OFFSTAGE_PUSH_TEAM_ID")
        let privateKey = try PushArguments.privateKey(at: keyPath)
        let pushType = try PushArguments.pushType(type, payload: object)
        let priority = try PushArguments.priority(priority, for: pushType)
        if let collapseID, collapseID.isEmpty || collapseID.utf8.count > 64 {
            throw ValidationError("--collapse-id must be 1 to 64 bytes; got \(collapseID.utf8.count)")
        }
        if let expiration, expiration < 0 {
            throw ValidationError("--expiration must be seconds from now (0 or more); got \(expiration)")
        }
        if let apnsID, UUID(uuidString: apnsID) == nil {
            throw ValidationError("--apns-id \(apnsID.debugDescription) is not a UUID; give one such as \(UUID().uuidString)")
        }
        if let token { try PushArguments.checkToken(token) }
        let address = try gateway.map(PushArguments.gatewayAddress)
        var trust: String?
        if let ca {
            if let address, !address.tls {
                throw ValidationError("--ca is for an https:// gateway; \(gateway!) is h2c: leave --ca out")
            }
            guard let text = try? String(contentsOfFile: ca, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----")
            else {
                throw ValidationError(
                    "--ca \(ca.debugDescription) is not a readable PEM certificate; give the CA certificate the gateway's "
                        + "certificate was issued by")
            }
            trust = text
        }
        return PushPlan(
            payload: payloadData, privateKeyPEM: privateKey, keyID: keyID, teamID: teamID, type: pushType,
            priority: priority, address: address, trustRootsPEM: trust)
    }

    func run(with client: ControlClient) throws {
        let plan = try plan()
        // The token and the gateway as the app's server would have them: from the app's registration.
        var token = self.token
        var address = plan.address
        var topic = app
        if token == nil {
            let reply = try client.pushCall(
                PushControlInterface.Method.token, PushControlInterface.TokenParameters(app: app),
                as: PushControlInterface.TokenReply.self)
            token = reply.token
            topic = reply.topic
            if address == nil { address = try PushArguments.gatewayAddress(reply.gateway, option: "the daemon's gateway") }
        } else if address == nil {
            let status = try client.pushCall(
                PushControlInterface.Method.status, PushControlInterface.StatusParameters(app: app, limit: 0),
                as: PushControlInterface.StatusReply.self)
            guard !status.gateway.address.isEmpty else {
                throw PushFailure(
                    "the daemon runs without a push gateway; start offstaged with its gateway on, or give --gateway URL")
            }
            address = try PushArguments.gatewayAddress(status.gateway.address, option: "the daemon's gateway")
        }
        guard let token, let address else { return }
        let notification = APNsNotification(
            deviceToken: token, topic: topic + (plan.type.topicSuffix ?? ""), payload: plan.payload, pushType: plan.type,
            priority: plan.priority,
            expiration: expiration.map { $0 == 0 ? 0 : Int64(Date().timeIntervalSince1970) + $0 },
            collapseID: collapseID, apnsID: apnsID)
        let configuration = APNsProviderClient.Configuration(
            host: address.host, port: address.port,
            tls: address.tls ? .init(trustRootsPEM: plan.trustRootsPEM) : nil,
            credentials: .init(keyID: plan.keyID, teamID: plan.teamID, privateKeyPEM: plan.privateKeyPEM))
        let response: APNsResponse
        do {
            response = try Blocking.run(timeout: .seconds(30)) {
                let connection = try await APNsProviderClient.connect(configuration)
                do {
                    let response = try await connection.send(notification)
                    await connection.close()
                    return response
                } catch {
                    await connection.close()
                    throw error
                }
            }
        } catch {
            throw report(
                PushOutcome(app: app, gateway: address.url, token: token, topic: notification.topic, status: nil,
                    apnsId: nil, reason: nil, message: "\(error)", fix: nil),
                client: client, code: 69)
        }
        let outcome = PushOutcome(
            app: app, gateway: address.url, token: token, topic: notification.topic, status: response.status,
            apnsId: response.apnsID, reason: response.reason, message: nil, fix: nil)
        guard response.status == 200 else {
            var refused = outcome
            let explained = PushArguments.explain(response)
            (refused.message, refused.fix) = (explained.message, explained.fix)
            throw report(refused, client: client, code: 1)
        }
        try client.output(
            outcome, text: "sent to \(app): apns-id \(response.apnsID ?? "-") (\(response.status), \(plan.type.rawValue))")
    }

    /// Writes a failure to standard error (JSON with --json) and returns the exit code to throw.
    private func report(_ outcome: PushOutcome, client: ControlClient, code: Int32) -> ExitCode {
        let line: String
        if client.json {
            line = (try? ControlClient.encode(outcome, pretty: false)) ?? (outcome.message ?? "")
        } else if let status = outcome.status {
            line = "offstage: the gateway refused the push: \(status) \(outcome.message ?? "")"
                + (outcome.fix.map { "; \($0)" } ?? "")
        } else {
            line = "offstage: \(outcome.message ?? "the push could not be sent")"
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
        return ExitCode(code)
    }
}

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

// MARK: Provider keys

/// `offstage push-keys …`: the provider keys app servers sign with (SPEC NT-3).
struct PushKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-keys",
        abstract: "Register, list and remove the provider keys app servers sign their pushes with.",
        discussion: """
            A provider key is a P-256 key pair with a 10-character id and a team id, as Apple's .p8 keys: the app \
            server keeps the private key and signs ES256 provider tokens (kid = the key id, iss = the team); the \
            gateway keeps the public key and checks them.
            """,
        subcommands: [PushKeysAdd.self, PushKeysList.self, PushKeysRemove.self],
        defaultSubcommand: PushKeysList.self)
}

struct PushKeysAdd: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Register a provider key: an existing public key, or a new pair whose private key is written out.",
        discussion: """
            With --generate FILE a new P-256 pair is made: the private key is written to FILE (PKCS#8 PEM, the \
            format of Apple's .p8 files, mode 0600; an existing file is never overwritten) and the public key is \
            registered. With --public-key FILE, FILE holds a public key in PEM, or a private .p8 key of which only \
            the public half is sent. --topic limits the key to these apps (repeatable); without it the key may send \
            to every app. A key with the same id is replaced.

            Prints the key id (10 random uppercase letters and digits unless --key-id gives one). --team-id \
            defaults to $OFFSTAGE_PUSH_TEAM_ID.
            """)
    @OptionGroup var globals: GlobalOptions
    @Option(
        name: .customLong("team-id"),
        help: ArgumentHelp("The team: the iss of its provider tokens [default: $OFFSTAGE_PUSH_TEAM_ID].", valueName: "TEAM"))
    var teamID: String?
    @Option(name: .customLong("key-id"), help: ArgumentHelp("The key's id (10 letters and digits).", valueName: "ID"))
    var keyID: String?
    @Option(
        name: .customLong("public-key"),
        help: ArgumentHelp("A public key (or a .p8 private key) in PEM to register.", valueName: "FILE"))
    var publicKey: String?
    @Option(help: ArgumentHelp("Make a new pair; write its private key here.", valueName: "PRIVATE_KEY_OUT"))
    var generate: String?
    @Option(
        name: .customLong("topic"),
        help: ArgumentHelp("An app the key may send to (repeatable); all apps when left out.", valueName: "APP_ID"))
    var topics: [String] = []

    mutating func validate() throws {
        let team = teamID ?? ProcessInfo.processInfo.environment["OFFSTAGE_PUSH_TEAM_ID"]
        guard let team, !team.isEmpty else {
            throw ValidationError("--team-id is missing; give --team-id TEAM or set OFFSTAGE_PUSH_TEAM_ID")
        }
        if team.contains(where: \.isWhitespace) { throw ValidationError("--team-id must not contain spaces") }
        if let keyID { try PushArguments.checkKeyID(keyID) }
        switch (publicKey, generate) {
        case (nil, nil):
            throw ValidationError(
                "give --public-key FILE to register a key you have, or --generate PRIVATE_KEY_OUT to make one")
        case (.some, .some):
            throw ValidationError("give --public-key or --generate, not both")
        case (let path?, nil):
            _ = try Self.publicKeyPEM(at: path)
        case (nil, let path?):
            try Self.checkNewFile(path)
        }
        if topics.contains("") { throw ValidationError("--topic is empty; give an app's id") }
    }

    func run(with client: ControlClient) throws {
        let team = teamID ?? ProcessInfo.processInfo.environment["OFFSTAGE_PUSH_TEAM_ID"] ?? ""
        let id = keyID ?? PushArguments.newKeyID()
        let publicPEM: String
        var written: String?
        if let generate {
            let pair = ProviderKeyPair.generate()
            try Self.writeNew(pair.privateKeyPEM, to: generate)
            (publicPEM, written) = (pair.publicKeyPEM, generate)
        } else {
            publicPEM = try Self.publicKeyPEM(at: publicKey ?? "")
        }
        let reply: PushControlInterface.AddKeyReply
        do {
            reply = try client.pushCall(
                PushControlInterface.Method.addKey,
                PushControlInterface.AddKeyParameters(
                    id: id, teamId: team, publicKey: publicPEM, topics: topics.isEmpty ? nil : topics),
                as: PushControlInterface.AddKeyReply.self)
        } catch {
            // The key was not registered: its private half is of no use.
            if let written { unlink(written) }
            throw error
        }
        struct Added: Encodable {
            var key: PushControlInterface.KeyMessage
            var privateKey: String?
        }
        if let written, !client.json {
            let note =
                "wrote the private key to \(written) (mode 0600): keep it with the app server, and send with "
                + "`offstage push APP_ID --key \(written) --key-id \(reply.key.id) --team-id \(team) --payload …`\n"
            FileHandle.standardError.write(Data(note.utf8))
        }
        try client.output(Added(key: reply.key, privateKey: written), text: reply.key.id)
    }

    /// The public key PEM in `path`: a public key as it is, the public half of a private key.
    static func publicKeyPEM(at path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("--public-key \(path.debugDescription) cannot be read; give a PEM file's path")
        }
        if text.contains("PRIVATE KEY") {
            guard let derived = try? ProviderKeyPair.publicKeyPEM(ofPrivateKeyPEM: text) else {
                throw ValidationError(
                    "--public-key \(path.debugDescription) holds a private key that is not P-256; provider keys are "
                        + "P-256 (ES256)")
            }
            return derived
        }
        guard text.contains("-----BEGIN PUBLIC KEY-----") else {
            throw ValidationError(
                "--public-key \(path.debugDescription) is not a PEM public key; give a file that begins with "
                    + "-----BEGIN PUBLIC KEY----- (or the .p8 private key)")
        }
        return text
    }

    /// Refuses a path that exists or whose folder does not.
    static func checkNewFile(_ path: String) throws {
        if FileManager.default.fileExists(atPath: path) {
            throw ValidationError(
                "--generate \(path.debugDescription) exists; it is not overwritten: give a new path, or remove the "
                    + "file first")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) || !isFolder.boolValue {
            throw ValidationError("--generate \(path.debugDescription): the folder \(folder) does not exist; create it first")
        }
    }

    /// Writes `text` to a new file readable by its owner alone; an existing file is never replaced.
    static func writeNew(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw PushFailure(
                "cannot create \(path.debugDescription) for the private key: \(reason); give a new path in a folder you "
                    + "can write")
        }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                unlink(path)
                throw PushFailure("cannot write the private key to \(path.debugDescription): \(reason)")
            }
            offset += count
        }
        guard fsync(fd) == 0 else {
            unlink(path)
            throw PushFailure("cannot write the private key to \(path.debugDescription): \(String(cString: strerror(errno)))")
        }
    }
}

struct PushKeysList: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the registered provider keys: id, team, the apps each may send to, when it was added.",
        discussion: #"With --json, the reply as it is: {"keys": [...]}."#)
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        let reply = try client.pushCall(
            PushControlInterface.Method.keys, NoParameters(), as: PushControlInterface.KeysReply.self)
        try client.output(reply, text: Table.pushKeys(reply.keys))
    }
}

struct PushKeysRemove: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a provider key: pushes signed with it are refused (403 InvalidProviderToken) from now on.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The key's id (see `offstage push-keys`).", valueName: "ID")) var id: String

    func validate() throws {
        if id.isEmpty { throw ValidationError("ID is empty; give a key id from `offstage push-keys list`") }
    }

    func run(with client: ControlClient) throws {
        _ = try client.pushCall(PushControlInterface.Method.removeKey, PushControlInterface.RemoveKeyParameters(id: id))
        try client.output(["removed": id], text: "removed key \(id)")
    }
}

// MARK: Status

/// `offstage push-status [APP_ID]`: the gateway, the apps' tokens and budgets, and what became of recent pushes.
struct PushStatus: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-status",
        abstract: "Show the push gateway, each app's token, held push and budget, and the newest push records.",
        discussion: """
            Records are newest first: each push's type, priority and collapse id, when the gateway accepted it, its \
            state (accepted, held, handed to the app's handler, done) and, once done, its outcome (handled, shown, \
            coalesced, expired, not-delivered, cut-off) with why. With --json, the reply as it is.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("Only this app's.", valueName: "APP_ID")) var app: String?
    @Option(help: ArgumentHelp("At most this many records (100 by default).", valueName: "N")) var limit: Int?

    func validate() throws {
        if app?.isEmpty == true { throw ValidationError("APP_ID is empty; give an app's id, or leave it out for all") }
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more; got \(limit)") }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.pushCall(
            PushControlInterface.Method.status, PushControlInterface.StatusParameters(app: app, limit: limit),
            as: PushControlInterface.StatusReply.self)
        try client.output(reply, text: Table.pushStatus(reply, app: app))
    }
}
