import ArgumentParser
import Dispatch
import Foundation
import OffstageProtocol
import OffstagePush
import Synchronization

// `offstage push`, `push-keys` and `push-status` (one file each, with their shared checks in PushArguments.swift): the push
// gateway as an app server and its operator see it
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
    // Unconditional: a negative value is a wrong value to report as such, not a missing one.
    @Option(
        parsing: .unconditional,
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
        // At most a century: the header is a date in seconds, which a larger number would overflow.
        if let expiration, !(0...3_155_760_000).contains(expiration) {
            throw ValidationError("--expiration must be seconds from now, 0 to 3155760000 (a century); got \(expiration)")
        }
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
