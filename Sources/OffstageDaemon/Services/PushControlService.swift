import OffstageCore
import OffstageProtocol
import OffstagePush

/// `io.offstage.PushControl`: what the user may do with the push gateway (SPEC NT-3..5): its provider keys, the apps'
/// tokens, and what became of pushes. A process that belongs to an app is refused.
struct PushControlService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(PushControlInterface.definition)
    }

    static let interface = PushControlInterface.name

    var methods: [String: VarlinkMethodHandler] {
        [
            "Status": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(PushControlInterface.StatusParameters.self)
                let id = try parameters.app.map { text throws(VarlinkError) in try engine.installedApp(text, in: Self.interface) }
                // Records are listed newest first, up to limit: 0 lists none (only budgets and counts).
                let limit = try parameters.checkedLimit()
                responder.reply(try engine.pushStatus(app: id, limit: limit))
            },
            "AddKey": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(PushControlInterface.AddKeyParameters.self)
                let key = try Self.checkedKey(parameters, at: engine.now)
                try engine.requireOwnGateway()
                try engine.pushStoreCall(in: Self.interface) { try engine.store.addPushKey(key) }
                engine.pushGateway?.gateway.providerKeysChanged(keyID: key.id)
                responder.reply(PushControlInterface.AddKeyReply(key: Self.message(key)))
            },
            "Keys": { context, _, responder in
                try engine.requireUser(context)
                try engine.requireOwnGateway()
                let keys = try engine.pushStoreCall(in: Self.interface) { try engine.store.pushKeys() }
                responder.reply(PushControlInterface.KeysReply(keys: keys.map(Self.message)))
            },
            "RemoveKey": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(PushControlInterface.RemoveKeyParameters.self)
                try engine.requireOwnGateway()
                let removed = try engine.pushStoreCall(in: Self.interface) { try engine.store.removePushKey(id: parameters.id) }
                guard removed else {
                    throw VarlinkError(
                        "\(Self.interface).NoSuchKey",
                        parameters: [
                            "message": .string("no provider key has the id \(QuotedText.quote(parameters.id))"),
                            "fix": .string("see the registered keys with `offstage push-keys list`"),
                        ])
                }
                // Provider tokens it signed stop working now, not when they expire.
                engine.pushGateway?.gateway.providerKeysChanged(keyID: parameters.id)
                responder.reply()
            },
            "Token": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(PushControlInterface.TokenParameters.self)
                let id = try engine.installedApp(parameters.app, in: Self.interface)
                guard let address = engine.pushAddress else { throw engine.noPushGateway(in: Self.interface) }
                guard let token = try engine.pushStoreCall(in: Self.interface, { try engine.store.liveToken(of: id) }) else {
                    throw VarlinkError(
                        "\(Self.interface).Unavailable",
                        parameters: [
                            "message": .string("'\(id)' has not registered for remote notifications"),
                            "fix": .string(
                                "the app must call registerForRemoteNotifications() (open it once: `offstage open \(id)`)"),
                        ])
                }
                responder.reply(PushControlInterface.TokenReply(token: token, gateway: address, topic: id.rawValue))
            },
        ]
    }

    /// The key as given, checked: ids of printable ASCII, a P-256 public key, app ids that are valid.
    static func checkedKey(_ parameters: PushControlInterface.AddKeyParameters, at now: Instant) throws(VarlinkError) -> OffstageStore.PushKeyRow {
        do throws(CoreError) {
            try parameters.checkNames()
        } catch {
            throw error.varlink(in: interface)
        }
        let publicKey: String
        do {
            publicKey = try ProviderKeyPair.canonicalPublicKeyPEM(parameters.publicKey)
        } catch {
            throw CoreError(
                .invalidArgument, "the public key is not a P-256 public key in PEM (-----BEGIN PUBLIC KEY-----)",
                fix: "give the public half of the ES256 key the server signs with (`openssl ec -in key.p8 -pubout`), or let `offstage push-keys add --generate` make a pair"
            ).varlink(in: interface)
        }
        return OffstageStore.PushKeyRow(
            id: parameters.id, teamID: parameters.teamId, publicKeyPEM: publicKey, topics: parameters.topics, addedAt: now)
    }

    static func message(_ key: OffstageStore.PushKeyRow) -> PushControlInterface.KeyMessage {
        .init(id: key.id, teamId: key.teamID, topics: key.topics, addedAt: key.addedAt.secondsSinceEpoch)
    }
}

extension DaemonEngine {
    /// The gateway, the apps' pushes and the newest records.
    func pushStatus(app: AppID?, limit: Int) throws(VarlinkError) -> PushControlInterface.StatusReply {
        let interface = PushControlInterface.name
        let (counts, tokens, subscriptions, records) = try pushStoreCall(in: interface) {
            (
                try store.pushCounts(), try store.liveTokens(), try store.liveWebPushSubscriptionIDs(),
                try store.pushRecords(app: app, limit: limit)
            )
        }
        let limits = core.pushLimits
        let apps = (app.map { [$0] } ?? core.apps.keys.sorted()).map { id in
            PushControlInterface.AppPushesMessage(
                app: id.rawValue, token: tokens[id],
                webPushEndpoint: subscriptions[id].flatMap(webPushEndpoint),
                held: core.pushes.held[id]?.id,
                budget: core.pushes.budgets[id]?.wakes(at: now, limits) ?? limits.burst)
        }
        let gateway = PushControlInterface.GatewayMessage(
            embedded: remotePush == nil, address: pushAddress ?? "",
            tls: remotePush.map { $0.address.lowercased().hasPrefix("https:") } ?? (pushGateway?.settings.tlsCertificate != nil),
            linkError: remotePush.flatMap { $0.isConnected ? nil : ($0.lastError ?? "not connected yet") })
        let connected = remotePush.map { $0.isConnected ? 1 : 0 } ?? (pushGateway == nil ? 0 : 1)
        return PushControlInterface.StatusReply(
            gateway: gateway, connectedDevices: connected, stored: counts.stored, held: counts.held,
            apps: apps, records: records.map { record in
                PushControlInterface.RecordMessage(
                    id: record.push.id, app: record.push.app.rawValue, type: record.push.type.rawValue,
                    priority: record.push.priority, collapseId: record.push.collapseID,
                    acceptedAt: record.push.acceptedAt.secondsSinceEpoch, state: record.state, outcome: record.outcome,
                    detail: record.detail, finishedAt: record.finishedAt?.secondsSinceEpoch)
            })
    }
}

extension DaemonEngine {
    /// Provider keys are the daemon's to keep only with its own gateway: a remote one keeps its own.
    func requireOwnGateway() throws(VarlinkError) {
        guard let remotePush else { return }
        throw VarlinkError(
            "\(PushControlInterface.name).Unavailable",
            parameters: [
                "message": .string("this device takes its pushes from the gateway at \(remotePush.address), which keeps the provider keys"),
                "fix": .string("manage keys there with `offstage-push keys`"),
            ])
    }
}
