import Foundation
@_spi(Testing) import Offstage
import OffstageCore
import OffstageHost
import OffstageProtocol
import OffstagePush
import OffstageSimulator
import Synchronization

/// The daemon of a ``TestDevice``: the simulation (the real core on a virtual clock, and a virtual device), and the
/// answers to the calls the app's SDK makes, given as the daemon gives them (``AppCalls``).
///
/// The SDK calls it from any thread — the main actor while a handler runs, a task the app started — so its state
/// is behind a lock. Callbacks are not handed to the app from here: the device takes them and delivers them on the
/// main actor, one at a time, so that a call the app makes from a handler never waits for another handler.
final class KitHost: InProcessDaemon {
    struct State {
        var simulation: Simulation
        /// The app's process that runs now and whose SDK this is, if any.
        var current: (app: AppID, pid: Int32)?
        /// Callbacks handed to the app and not yet answered, with what they were.
        var unanswered: [UInt64: String] = [:]
        /// Calls the kit does not answer, by method, each said once in the device's warnings.
        var unsupported: Set<String> = []
        /// What the kit noticed of the app's use of it, in order.
        var warnings: [String] = []
        /// How many calls the app made so far: the device waits for them to stop before time moves on.
        var calls = 0
        /// The device tokens issued, by app: one per app, the same at every registration until it is revoked.
        var pushTokens: [AppID: String] = [:]
        /// Tokens revoked (the app unregistered), with their app and when.
        var revokedTokens: [String: (app: AppID, at: Instant)] = [:]
        /// The `apns-id` of every push the gateway accepted: a retry is acknowledged, not delivered twice.
        var acceptedPushes: Set<String> = []
        /// Each app's live Web Push subscription: the device is its user agent and keeps its keys.
        var webPushSubscriptions: [AppID: GatewaySubscription] = [:]
        /// Subscriptions ended (the app unsubscribed, or was uninstalled), by id, with when.
        var endedSubscriptions: [String: Instant] = [:]
        /// The descriptors the app handed off, by token (``KitHost/handOff(_:call:)``).
        var handedOff: [UInt64: HandedOff] = [:]

        /// What the app was handed and has not finished, oldest first: callbacks not answered, and the
        /// remote-notification handlers it has not completed (the SDK answers their callback at once and completes the
        /// run when the handler returns). Time waits for them.
        var awaited: [String] {
            let callbacks = unanswered.sorted { $0.key < $1.key }.map(\.value)
            guard let app = current?.app, let process = simulation.core.apps[app]?.process else { return callbacks }
            return callbacks + process.pushRuns.map { "the remote-notification handler of push \($0.push)" }
                + process.transferRuns.map { "the events handler of background session \($0.session)" }
        }
    }

    let state: Mutex<State>
    /// The device's folder: apps' data folders, and what the kit keeps of transfers.
    let folder: URL
    /// The interfaces the kit answers, with the methods of each and how (the daemon's answers: `OffstageHost`).
    let answered: [String: (methods: Set<String>, answer: Answering)]
    /// The transfer calls, answered as the daemon answers them, with downloads handed over in the app's data folder.
    let transfers: TransferCalls

    init(simulation: Simulation, folder: URL) {
        var simulation = simulation
        // The test's server answers a transfer when the test says what it answers (TestDevice.respond(to:with:)).
        simulation.unansweredTransfersWait = true
        state = Mutex(State(simulation: simulation))
        self.folder = folder
        transfers = TransferCalls(handedOver: { KitHost.handedOver($0, in: folder) })
        answered = [
            AppInterface.name: (AppCalls.methods, AppCalls.answer),
            NotificationsInterface.name: (NotificationCalls.methods, NotificationCalls.answer),
            PushInterface.name: (PushCalls.methods, PushCalls.answer),
            TransfersInterface.name: (TransferCalls.methods, transfers.answer),
            ModesInterface.name: (
                ModeCalls.methods.union(AccessoryCalls.methods),
                { @Sendable method, call, caller, core, now throws(VarlinkError) in
                    guard AccessoryCalls.methods.contains(method) else {
                        return try ModeCalls.answer(method, call, caller: caller, core: &core, at: now)
                    }
                    return try AccessoryCalls.answer(
                        method, call, caller: caller, core: &core, at: now, present: AccessoryCalls.isPresent)
                }
            ),
        ]
    }

    /// How a shell answers one method of an interface (``answered``).
    typealias Answering = @Sendable (String, VarlinkReceivedCall, AppCaller, inout OffstageCore, Instant) throws(VarlinkError)
        -> HostAnswer

    /// Runs `body` on the state, under the lock.
    func with<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try state.withLock { try body(&$0) }
    }

    /// The virtual now, in seconds since 1970.
    var nowSeconds: Double { state.withLock { $0.simulation.now.secondsSinceEpoch } }

    // MARK: InProcessDaemon

    func answer(_ message: Data) -> Data? {
        let call: VarlinkReceivedCall
        do {
            call = try VarlinkCodec.decodeCall(message)
        } catch {
            return VarlinkCodec.encodeError(error)
        }
        let answer = answer(call)
        guard !call.header.oneway else { return nil }
        switch answer {
        case .success(let reply):
            return (try? VarlinkCodec.encodeReply(reply))
                ?? VarlinkCodec.encodeError(
                    Self.error("io.offstage.Protocol.InternalError", "the reply to \(call.header.method) did not encode", fix: "report it"))
        case .failure(let error):
            return VarlinkCodec.encodeError(error)
        }
    }

    func processExited(status: Int32) {
        state.withLock { state in
            guard let current = state.current else { return }
            state.simulation.externalExited(current.pid, status: .exited(status))
        }
    }

    // MARK: Answering

    private func answer(_ call: VarlinkReceivedCall) -> Result<any Encodable & Sendable, VarlinkError> {
        let method = call.header.method
        let interface = method.split(separator: ".").dropLast().joined(separator: ".")
        let name = String(method.split(separator: ".").last ?? "")
        return state.withLock { state in
            state.calls += 1
            guard let current = state.current else {
                return .failure(
                    Self.error(
                        "\(interface).NotAnApp", "the app's process is not running on the test device",
                        fix: "make calls from the app's code while the test device runs it"))
            }
            if interface == PushInterface.name, Self.registrations.contains(name) {
                do throws(VarlinkError) {
                    return .success(try Self.registration(name, call, current.app, &state))
                } catch {
                    return .failure(error)
                }
            }
            if interface == TransfersInterface.name, name == "CreateTask" {
                do throws(VarlinkError) {
                    return .success(try createTransfer(call, caller: AppCaller(app: current.app, pid: current.pid), &state))
                } catch {
                    return .failure(error)
                }
            }
            if interface == ModesInterface.name, name == "RegisterAccessory",
                let path = try? call.decodeParameters(as: ModesInterface.RegisterAccessoryParameters.self).path
            {
                // The device's view of the path, brought up to date before the core hears of it.
                Self.lookAt(path, &state.simulation)
            }
            guard let answered = answered[interface], answered.methods.contains(name) else {
                if state.unsupported.insert(method).inserted {
                    state.warnings.append("the test kit does not answer \(method) yet: the app's call failed")
                }
                return .failure(
                    Self.error(
                        "io.offstage.Testing.NotSupported", "the test kit does not answer \(method) yet",
                        fix: "test this part of the app against offstaged"))
            }
            let (now, caller) = (state.simulation.now, AppCaller(app: current.app, pid: current.pid))
            do {
                let answer = try state.simulation.callCore { core in
                    let answer = try answered.answer(name, call, caller, &core, now)
                    return (answer, answer.actions)
                }
                if let callback = answer.answeredCallback { state.unanswered[callback.rawValue] = nil }
                return .success(answer.reply)
            } catch let error as VarlinkError {
                return .failure(error)
            } catch {
                return .failure(Self.error("io.offstage.Protocol.InternalError", "\(error)", fix: "report it"))
            }
        }
    }

    /// The push calls the kit answers itself: registrations, which the daemon keeps in its store.
    static let registrations: Set<String> = ["Register", "Unregister", "SubscribeWebPush", "UnsubscribeWebPush"]

    /// The kit's own answer to a push registration (one of ``registrations``). The daemon keeps tokens and
    /// subscriptions in its store and registers them with its gateway; the kit keeps them here, for its gateway
    /// (``TestDevice/sendPush(_:to:headers:)``, ``TestDevice/sendWebPush(_:to:headers:)``).
    private static func registration(
        _ method: String, _ call: VarlinkReceivedCall, _ app: AppID, _ state: inout State
    ) throws(VarlinkError) -> any Encodable & Sendable {
        switch method {
        case "Register":
            let token = state.pushTokens[app] ?? Self.newToken()
            state.pushTokens[app] = token
            return PushInterface.RegisterReply(
                registration: .init(token: token, gateway: Self.gateway, topic: app.rawValue))
        case "Unregister":
            revokeToken(of: app, &state)
            return EmptyReply()
        case "SubscribeWebPush":
            let key = try PushCalls.applicationServerKey(
                try call.decodeParameters(as: PushInterface.SubscribeWebPushParameters.self))
            let subscription =
                state.webPushSubscriptions[app]
                ?? GatewaySubscription(
                    id: Base64URL.encode(Data(Self.randomBytes(32))), app: app.rawValue, device: KitPushBackend.device,
                    applicationServerKey: key, userAgentKeys: WebPushUserAgentKeys.generate())
            guard subscription.applicationServerKey == key, let keys = subscription.userAgentKeys else {
                throw PushCalls.otherApplicationServerKey
            }
            state.webPushSubscriptions[app] = subscription
            return PushInterface.SubscribeWebPushReply(
                subscription: PushCalls.subscription(
                    endpoint: Self.webPushEndpoint(subscription.id), keys: keys, applicationServerKey: key))
        default:
            endSubscription(of: app, &state)
            return EmptyReply()
        }
    }

    /// Ends the app's Web Push subscription, if it has one: its endpoint answers 410 from now on.
    static func endSubscription(of app: AppID, _ state: inout State) {
        guard let subscription = state.webPushSubscriptions.removeValue(forKey: app) else { return }
        state.endedSubscriptions[subscription.id] = state.simulation.now
    }

    /// The push resource of a subscription, at the kit's gateway.
    static func webPushEndpoint(_ id: String) -> String { "\(gateway)/push/\(id)" }

    /// Revokes the app's token, if it has one: the gateway answers 410 `Unregistered` for it from now on.
    static func revokeToken(of app: AppID, _ state: inout State) {
        guard let token = state.pushTokens.removeValue(forKey: app) else { return }
        state.revokedTokens[token] = (app, state.simulation.now)
    }

    /// Where the kit says app servers send pushes: a name that cannot resolve (RFC 2606), since the kit's gateway is
    /// called in the test's process, not over the network.
    static let gateway = "https://push.offstage-testing.invalid"

    /// A device token: 32 random bytes in hexadecimal, as the daemon issues them.
    private static func newToken() -> String { randomBytes(32).map { String(format: "%02x", $0) }.joined() }

    /// `count` bytes from the system's secure generator.
    private static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// An error reply with the message and fix every Offstage error carries.
    private static func error(_ name: String, _ message: String, fix: String) -> VarlinkError {
        VarlinkError(name, parameters: ["message": .string(message), "fix": .string(fix)])
    }
}

/// The core's memory pressure, named apart from ``TestDevice/MemoryPressure`` for the device's own code.
typealias CoreMemoryPressure = MemoryPressure
