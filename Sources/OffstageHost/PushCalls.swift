import Foundation
import OffstageCore
import OffstageProtocol
import OffstagePush

/// The calls of `io.offstage.Push` that only tell the core, answered the same way by every shell. Registering for a
/// token or a Web Push subscription is each shell's own: the daemon keeps tokens in its store and hands them to its
/// gateway, the test kit keeps them in memory.
public enum PushCalls {
    /// The methods answered here, unqualified.
    public static let methods: Set<String> = ["CompleteRemoteNotification"]

    /// Answers `method` (one of ``methods``) for `caller` at `now`.
    ///
    /// - Throws: `org.varlink.service.InvalidParameter` for parameters that do not decode,
    ///   `io.offstage.Push.InvalidArgument` for a result that is not a handler's, and what the core refused.
    public static func answer(
        _ method: String, _ call: VarlinkReceivedCall, caller: AppCaller, core: inout OffstageCore, at now: Instant
    ) throws(VarlinkError) -> HostAnswer {
        switch method {
        case "CompleteRemoteNotification":
            let parameters = try call.decodeParameters(as: PushInterface.CompleteParameters.self)
            guard let result = TaskResult(rawValue: parameters.result) else {
                throw CoreError(
                    .invalidArgument, "result \(QuotedText.quote(parameters.result)) is not a handler result",
                    fix: "complete with newData, noData or failed"
                ).varlink(in: PushInterface.name)
            }
            do throws(CoreError) {
                return HostAnswer(
                    actions: try core.completeRemoteNotification(
                        caller.app, pid: caller.pid, run: parameters.run, result: result, at: now))
            } catch {
                throw error.varlink(in: PushInterface.name)
            }
        default:
            throw VarlinkError.methodNotFound("\(PushInterface.name).\(method)")
        }
    }

    /// The application server key a `SubscribeWebPush` call restricts the subscription to: nil for none, or the
    /// decoded key.
    ///
    /// - Throws: `io.offstage.Push.InvalidArgument` when the text is not a P-256 public key in base64url.
    public static func applicationServerKey(_ parameters: PushInterface.SubscribeWebPushParameters) throws(VarlinkError) -> Data? {
        guard let text = parameters.applicationServerKey else { return nil }
        guard let key = Base64URL.decode(text), VAPIDCredentials.isPublicKey(key) else {
            throw CoreError(
                .invalidArgument,
                "applicationServerKey \(QuotedText.quote(text)) is not a P-256 public key (65 bytes, uncompressed, base64url)",
                fix: "give the app server's VAPID public key, as browsers take it for PushManager.subscribe"
            ).varlink(in: PushInterface.name)
        }
        return key
    }

    /// The refusal of a subscription asked with another key than the live one's.
    public static let otherApplicationServerKey = CoreError(
        .invalidArgument,
        "the app's Web Push subscription is restricted to another application server key than the one given",
        fix: "unsubscribe first (unregisterForWebPush), then subscribe with the new key"
    ).varlink(in: PushInterface.name)

    /// The subscription as the app receives it.
    public static func subscription(
        endpoint: String, keys: WebPushUserAgentKeys, applicationServerKey: Data?
    ) -> PushInterface.WebPushSubscriptionMessage {
        PushInterface.WebPushSubscriptionMessage(
            endpoint: endpoint, p256dh: Base64URL.encode(keys.publicKey), auth: Base64URL.encode(keys.authSecret),
            applicationServerKey: applicationServerKey.map(Base64URL.encode))
    }
}

extension RemotePush {
    /// The core's value of a push the gateway accepted (answered 200): what every shell hands the core.
    public init(accepted: AcceptedPush) {
        let aps = accepted.aps
        let alert = aps.alert.map { PushAlert(title: $0.title ?? "", subtitle: $0.subtitle ?? "", body: $0.body ?? "") }
        self.init(
            id: accepted.apnsID, app: AppID(accepted.app),
            type: CorePushType(rawValue: accepted.pushType.rawValue) ?? .alert,
            priority: accepted.priority.rawValue, collapseID: accepted.collapseID,
            expiresAt: accepted.expiration.map(Self.instant), acceptedAt: Self.instant(accepted.acceptedAt),
            aps: PushAPS(
                alert: alert, badge: aps.badge, sound: aps.sound?.name, threadID: aps.threadID, category: aps.category,
                contentAvailable: aps.contentAvailable, mutableContent: aps.mutableContent),
            payload: String(decoding: accepted.payload, as: UTF8.self), attemptOnce: accepted.attemptOnce)
    }

    /// The instant of `date`, to the nanosecond.
    private static func instant(_ date: Date) -> Instant {
        Instant(nanosecondsSinceEpoch: Int64((date.timeIntervalSince1970 * 1e9).rounded()))
    }
}
