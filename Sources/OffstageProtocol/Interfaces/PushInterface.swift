/// `io.offstage.Push`: what an app's process may do with remote notifications (SPEC NT-3, NT-4). As with
/// `io.offstage.App`, the daemon knows the calling app from the connection's peer credentials: an app registers and
/// completes only its own pushes, and its token reaches only it.
public enum PushInterface {
    /// The interface name.
    public static let name = "io.offstage.Push"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # What an app's process may do with remote notifications (registerForRemoteNotifications and the
        # remote-notification handler). The daemon identifies the calling app from the connection's peer credentials.
        interface io.offstage.Push

        # Where the app's server sends its pushes.
        type Registration (
          # the device token: 64 hex digits, the app's on this device until it is uninstalled
          token: string,
          # the gateway's provider API (https://host:port, or http://host:port for h2c on loopback)
          gateway: string,
          # the apns-topic the server sends with: the app's id
          topic: string
        )

        # A Web Push subscription (RFC 8030, 8291, 8292): what a PushSubscription holds in a browser.
        type WebPushSubscription (
          # the push resource the app server POSTs its messages to
          endpoint: string,
          # the subscription's P-256 public key, uncompressed, base64url without padding (keys.p256dh)
          p256dh: string,
          # the 16-byte authentication secret, base64url without padding (keys.auth)
          auth: string,
          # the application server (VAPID) key the subscription is restricted to, base64url, if any
          applicationServerKey: ?string
        )

        # Registers the app for remote notifications: the same token each time, until the app is uninstalled.
        method Register() -> (registration: Registration)

        # Subscribes the app to Web Push: the same subscription each time, until the app is uninstalled or
        # unsubscribes. applicationServerKey (the app server's VAPID public key, 65 bytes uncompressed, base64url)
        # restricts it: only messages signed by that key are accepted. Subscribing again with another key fails.
        method SubscribeWebPush(applicationServerKey: ?string) -> (subscription: WebPushSubscription)

        # Ends the app's Web Push subscription: its endpoint answers 410 Gone from now on.
        method UnsubscribeWebPush() -> ()

        # Revokes the app's token: the gateway answers 410 Unregistered for it from now on. Registering again gives a
        # new one.
        method Unregister() -> ()

        # The app's remote-notification handler finished run (from the remoteNotification callback) with result:
        # newData, noData or failed.
        method CompleteRemoteNotification(run: int, result: string) -> ()

        # The calling process is not an app the daemon knows.
        error NotAnApp (pid: int, message: string, fix: string)

        # The app has no process the daemon manages (it was not launched by the daemon or attached).
        error AppNotRunning (message: string, fix: string)

        # The daemon runs without a push gateway.
        error Unavailable (message: string, fix: string)

        error InvalidArgument (message: string, fix: string)

        # The run named is not one this process was handed (a run that ended already is not an error).
        error NoSuchTask (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let register = "io.offstage.Push.Register"
        public static let unregister = "io.offstage.Push.Unregister"
        public static let completeRemoteNotification = "io.offstage.Push.CompleteRemoteNotification"
        public static let subscribeWebPush = "io.offstage.Push.SubscribeWebPush"
        public static let unsubscribeWebPush = "io.offstage.Push.UnsubscribeWebPush"
    }

    /// A Web Push subscription: the endpoint and the keys an app server encrypts to.
    public struct WebPushSubscriptionMessage: Codable, Hashable, Sendable {
        public var endpoint: String
        public var p256dh: String
        public var auth: String
        public var applicationServerKey: String?
        public init(endpoint: String, p256dh: String, auth: String, applicationServerKey: String?) {
            self.endpoint = endpoint
            self.p256dh = p256dh
            self.auth = auth
            self.applicationServerKey = applicationServerKey
        }
    }

    /// `SubscribeWebPush` parameters.
    public struct SubscribeWebPushParameters: Codable, Hashable, Sendable {
        public var applicationServerKey: String?
        public init(applicationServerKey: String?) { self.applicationServerKey = applicationServerKey }
    }

    /// `SubscribeWebPush` reply.
    public struct SubscribeWebPushReply: Codable, Hashable, Sendable {
        public var subscription: WebPushSubscriptionMessage
        public init(subscription: WebPushSubscriptionMessage) { self.subscription = subscription }
    }

    /// Where the app's server sends its pushes.
    public struct RegistrationMessage: Codable, Hashable, Sendable {
        public var token: String
        public var gateway: String
        public var topic: String
        public init(token: String, gateway: String, topic: String) {
            self.token = token
            self.gateway = gateway
            self.topic = topic
        }
    }

    /// `Register` reply.
    public struct RegisterReply: Codable, Hashable, Sendable {
        public var registration: RegistrationMessage
        public init(registration: RegistrationMessage) { self.registration = registration }
    }

    /// `CompleteRemoteNotification` parameters.
    public struct CompleteParameters: Codable, Hashable, Sendable {
        public var run: UInt64
        public var result: String
        public init(run: UInt64, result: String) {
            self.run = run
            self.result = result
        }
    }
}
