import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageCore
import OffstagePush
import Synchronization

/// The device's link to a multi-device gateway (SPEC NT-5, decision 0035): one long-lived HTTP/2 connection to a
/// node, re-established with backoff when it drops.
///
/// On each connection the device first registers every token and subscription it has, then pulls: each answer's
/// pushes are written to the inbox (at most once per id) and handed to the engine, and only then acknowledged, in the
/// next pull. A push the gateway stored is therefore never lost: until acknowledged, every node sends it again.
final class RemotePushLink: Sendable {
    /// How long a pull waits at the gateway for a push before it is made again.
    static let pullWait: Double = 25
    /// The first wait after a failure, and the longest.
    static let backoff: (first: Duration, longest: Duration) = (.milliseconds(250), .seconds(30))

    let settings: RemotePushSettings
    /// One configuration per node, tried in turn.
    private let configurations: [DeviceLinkClient.Configuration]
    private let store: OffstageStore
    private let deliver: @Sendable (RemotePush) -> Void
    private let logger: Logger
    /// The link's own event loop, so that a burst of pushes never delays the engine's.
    private let eventLoopGroup: MultiThreadedEventLoopGroup
    private let state = Mutex(State())

    private struct State {
        var client: DeviceLinkClient?
        var task: Task<Void, Never>?
        var stopped = false
        var lastError: String?
        /// A registration is being sent for a change; `changed` says another change came meanwhile.
        var registering = false
        var changed = false
    }

    /// A link for `settings`; reads the secret file now (throws naming it when it cannot), connects on ``start()``.
    init(
        settings: RemotePushSettings, store: OffstageStore, logger: Logger, deliver: @escaping @Sendable (RemotePush) -> Void
    ) throws {
        guard let data = FileManager.default.contents(atPath: settings.secretFile) else {
            throw PushSettingsError(
                description: "push.remote.secretFile \(settings.secretFile) cannot be read; write the secret `offstage-push devices add \(settings.device)` printed into it")
        }
        let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else {
            throw PushSettingsError(description: "push.remote.secretFile \(settings.secretFile) is empty; write the device's secret into it")
        }
        var trustRoots: String?
        if let path = settings.trustRoots {
            guard let pem = FileManager.default.contents(atPath: path) else {
                throw PushSettingsError(description: "push.remote.trustRoots \(path) cannot be read; give a readable PEM file")
            }
            trustRoots = String(decoding: pem, as: UTF8.self)
        }
        self.settings = settings
        self.configurations = settings.linkOrigins.map { origin in
            DeviceLinkClient.Configuration(url: origin, device: settings.device, secret: secret, trustRootsPEM: trustRoots)
        }
        self.store = store
        self.logger = logger
        self.deliver = deliver
        // Made last: nothing above can throw and leave its thread running.
        self.eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// The gateway's origin without a trailing slash: registrations and Web Push endpoints carry it.
    var address: String {
        settings.url.hasSuffix("/") ? String(settings.url.dropLast()) : settings.url
    }

    /// The push resource of a Web Push subscription at the gateway.
    func webPushEndpoint(_ subscription: String) -> String { "\(address)/push/\(subscription)" }

    /// Whether a connection to a node is open now.
    var isConnected: Bool { state.withLock { $0.client?.isConnected ?? false } }

    /// Why the last connection or call failed, while not connected.
    var lastError: String? { state.withLock { $0.lastError } }

    /// Starts keeping the link.
    func start() {
        let task = Task { await self.keep() }
        state.withLock { $0.task = task }
    }

    /// Ends the link: the pull in flight is abandoned (what it carried is not acknowledged, so it comes again). Only
    /// the first call does anything.
    func stop() async {
        let (task, client, first) = state.withLock { state in
            defer { state.stopped = true }
            return (state.task, state.client, !state.stopped)
        }
        guard first else { return }
        task?.cancel()
        await client?.close()
        await task?.value
        try? await eventLoopGroup.shutdownGracefully()
    }

    /// Registers every token and subscription with the gateway now, over the open connection. Throws when there is
    /// none or the gateway refuses; the next connection registers them anyway.
    func registerNow() async throws {
        guard let client = state.withLock({ $0.client }), client.isConnected else {
            throw DeviceLinkError(
                description: "the push gateway at \(address) is not reachable now\(lastError.map { " (\($0))" } ?? "")")
        }
        try await client.register(store.deviceRegistrations())
    }

    /// Something to register changed (a token revoked, a subscription ended): sent now when connected, else on the
    /// next connection.
    func registrationsChanged() {
        let start = state.withLock { state in
            state.changed = true
            defer { state.registering = true }
            return !state.registering
        }
        guard start else { return }
        // One sender at a time, each sending what the store holds when it starts: changes that come together (an
        // uninstall revokes the token and ends the subscription) go in one registration.
        Task {
            while state.withLock({ state in
                defer { state.changed = false }
                state.registering = state.changed
                return state.changed
            }) {
                do {
                    try await registerNow()
                } catch {
                    logger.info("push registrations not sent yet: \(error); sent on the next connection")
                }
            }
        }
    }

    private var stopped: Bool { state.withLock { $0.stopped } || Task.isCancelled }

    /// Connects, registers and pulls until stopped, waiting longer after each failure in a row. After a failure the
    /// next node is tried at once; a wait follows each round of failures through all of them.
    private func keep() async {
        var wait = Self.backoff.first
        var node = 0
        var failuresInRow = 0
        while !stopped {
            let configuration = configurations[node % configurations.count]
            do {
                let client = try await DeviceLinkClient.connect(configuration, eventLoopGroup: eventLoopGroup)
                let keep = state.withLock { state in
                    if state.stopped { return false }
                    state.client = client
                    return true
                }
                guard keep else {
                    await client.close()
                    return
                }
                try await client.register(store.deviceRegistrations())
                state.withLock { $0.lastError = nil }
                logger.notice("push link to \(configuration.url) up as device \(settings.device)")
                wait = Self.backoff.first
                failuresInRow = 0
                try await pullLoop(client)
            } catch {
                if stopped { return }
                let client = state.withLock { state in
                    state.lastError = "\(error)"
                    defer { state.client = nil }
                    return state.client
                }
                await client?.close()
                node += 1
                failuresInRow += 1
                guard failuresInRow % configurations.count == 0 else {
                    logger.warning("push link to \(configuration.url) down: \(error); trying the next node")
                    continue
                }
                logger.warning("push link to \(configuration.url) down: \(error); trying again in \(wait)")
                try? await Task.sleep(for: Self.jittered(wait))
                wait = min(wait * 2, Self.backoff.longest)
            }
        }
    }

    /// Pulls until the connection fails: each batch goes to the inbox, then is acknowledged with the next pull.
    private func pullLoop(_ client: DeviceLinkClient) async throws {
        var acks: [String] = []
        while !stopped {
            let pushes = try await client.pull(acknowledging: acks, waitSeconds: Self.pullWait)
            acks = try pushes.map { linked in
                try take(linked)
                return linked.delivery
            }
        }
    }

    /// Writes one linked push to the inbox and hands it to the engine when it is new. A push that can never be one
    /// is logged and acknowledged; a store failure throws, so nothing is acknowledged that the inbox does not hold.
    private func take(_ linked: LinkedPush) throws {
        let push: RemotePush
        do {
            push = try LinkedPushIntake.push(linked, store: store)
        } catch let error as DeviceLinkError {
            logger.error("push \(linked.apnsID) from the gateway dropped: \(error)")
            return
        }
        if let stored = try store.acceptPush(push) { deliver(stored) }
    }

    private static func jittered(_ duration: Duration) -> Duration {
        duration * Double.random(in: 0.8...1.2)
    }
}
