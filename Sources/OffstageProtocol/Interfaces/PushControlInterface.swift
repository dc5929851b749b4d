import OffstageCore

/// `io.offstage.PushControl`: what the user (the CLI) may do with the push gateway (SPEC NT-3..5): its provider keys,
/// the apps' tokens, and what became of pushes.
public enum PushControlInterface {
    /// The interface name.
    public static let name = "io.offstage.PushControl"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # The push gateway: provider keys, the apps' device tokens, and what became of pushes.
        interface io.offstage.PushControl

        # A key app servers sign their provider tokens (ES256 JWTs) with. topics: the app ids it may send to, all
        # when null.
        type Key (
          id: string,
          teamId: string,
          topics: ?[]string,
          addedAt: float
        )

        # Where the gateway listens. address: https://host:port or http://host:port (h2c), empty when it is off.
        # Not embedded: the device takes its pushes from an offstage-push gateway at address; linkError says why
        # the link to it is down (null while it is up).
        type Gateway (
          embedded: bool,
          address: string,
          tls: bool,
          linkError: ?string
        )

        # One app's pushes: its token (null until it registers), the background push it has held over budget,
        # and the wakes left in its budget.
        type AppPushes (
          app: string,
          token: ?string,
          # the app's Web Push endpoint, when it is subscribed
          webPushEndpoint: ?string,
          held: ?string,
          budget: int
        )

        # A push as the device's inbox keeps it. state: accepted, held, handed (to the app's handler) or done;
        # outcome (when done): handled, shown, coalesced, expired, not-delivered or cut-off, with its detail.
        type Record (
          id: string,
          app: string,
          type: string,
          priority: int,
          collapseId: ?string,
          acceptedAt: float,
          state: string,
          outcome: ?string,
          detail: ?string,
          finishedAt: ?float
        )

        # The gateway, the apps' pushes, and the newest records (of one app, or all), newest first, at most limit
        # (100 when null). connectedDevices: devices whose daemon is connected now; stored: pushes accepted and not
        # yet done with; held: pushes waiting for an app's budget.
        method Status(app: ?string, limit: ?int) -> (
          gateway: Gateway,
          connectedDevices: int,
          stored: int,
          held: int,
          apps: []AppPushes,
          records: []Record
        )

        # Registers a provider key: its id (the JWT's kid, 10 characters), team (the JWT's iss), its P-256 public
        # key in PEM, and the app ids it may send to (all when null). Replaces a key with that id.
        method AddKey(id: string, teamId: string, publicKey: string, topics: ?[]string) -> (key: Key)

        # The registered keys, by id.
        method Keys() -> (keys: []Key)

        # Removes a key: provider tokens it signed are refused from now on.
        method RemoveKey(id: string) -> ()

        # The app's device token and the gateway to send to, as the app's server would have them.
        method Token(app: string) -> (token: string, gateway: string, topic: string)

        error AppNotInstalled (message: string, fix: string)

        # No key with that id.
        error NoSuchKey (message: string, fix: string)

        # The app has not registered for remote notifications, or the daemon runs without a gateway.
        error Unavailable (message: string, fix: string)

        error InvalidArgument (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let status = "io.offstage.PushControl.Status"
        public static let addKey = "io.offstage.PushControl.AddKey"
        public static let keys = "io.offstage.PushControl.Keys"
        public static let removeKey = "io.offstage.PushControl.RemoveKey"
        public static let token = "io.offstage.PushControl.Token"
    }

    /// A provider key.
    public struct KeyMessage: Codable, Hashable, Sendable {
        public var id: String
        public var teamId: String
        public var topics: [String]?
        public var addedAt: Double
        public init(id: String, teamId: String, topics: [String]?, addedAt: Double) {
            self.id = id
            self.teamId = teamId
            self.topics = topics
            self.addedAt = addedAt
        }
    }

    /// Where the gateway listens.
    public struct GatewayMessage: Codable, Hashable, Sendable {
        public var embedded: Bool
        public var address: String
        public var tls: Bool
        public var linkError: String?
        public init(embedded: Bool, address: String, tls: Bool, linkError: String? = nil) {
            self.embedded = embedded
            self.address = address
            self.tls = tls
            self.linkError = linkError
        }
    }

    /// One app's pushes.
    public struct AppPushesMessage: Codable, Hashable, Sendable {
        public var app: String
        public var token: String?
        public var webPushEndpoint: String?
        public var held: String?
        public var budget: Int
        public init(app: String, token: String?, webPushEndpoint: String? = nil, held: String?, budget: Int) {
            self.app = app
            self.token = token
            self.webPushEndpoint = webPushEndpoint
            self.held = held
            self.budget = budget
        }
    }

    /// A push as the inbox keeps it.
    public struct RecordMessage: Codable, Hashable, Sendable {
        public var id: String
        public var app: String
        public var type: String
        public var priority: Int
        public var collapseId: String?
        public var acceptedAt: Double
        public var state: String
        public var outcome: String?
        public var detail: String?
        public var finishedAt: Double?
        public init(
            id: String, app: String, type: String, priority: Int, collapseId: String?, acceptedAt: Double, state: String,
            outcome: String?, detail: String?, finishedAt: Double?
        ) {
            self.id = id
            self.app = app
            self.type = type
            self.priority = priority
            self.collapseId = collapseId
            self.acceptedAt = acceptedAt
            self.state = state
            self.outcome = outcome
            self.detail = detail
            self.finishedAt = finishedAt
        }
    }

    /// `Status` parameters.
    public struct StatusParameters: Codable, Hashable, Sendable {
        public var app: String?
        public var limit: Int?
        public init(app: String? = nil, limit: Int? = nil) {
            self.app = app
            self.limit = limit
        }

        /// How many records to list, newest first: 100 unless given, 0 (only budgets and counts) to 10,000.
        /// - Throws: `InvalidParameter` naming `limit`.
        public func checkedLimit() throws(VarlinkError) -> Int {
            try VarlinkError.checking { () throws(NumberOutOfRange) in
                try CheckedNumber.integer(limit ?? 100, field: "limit", in: 0 ... 10_000)
            }
        }
    }

    /// `Status` reply.
    public struct StatusReply: Codable, Hashable, Sendable {
        public var gateway: GatewayMessage
        public var connectedDevices: Int
        public var stored: Int
        public var held: Int
        public var apps: [AppPushesMessage]
        public var records: [RecordMessage]
        public init(
            gateway: GatewayMessage, connectedDevices: Int, stored: Int, held: Int, apps: [AppPushesMessage],
            records: [RecordMessage]
        ) {
            self.gateway = gateway
            self.connectedDevices = connectedDevices
            self.stored = stored
            self.held = held
            self.apps = apps
            self.records = records
        }
    }

    /// `AddKey` parameters.
    public struct AddKeyParameters: Codable, Hashable, Sendable {
        public var id: String
        public var teamId: String
        public var publicKey: String
        public var topics: [String]?
        public init(id: String, teamId: String, publicKey: String, topics: [String]?) {
            self.id = id
            self.teamId = teamId
            self.publicKey = publicKey
            self.topics = topics
        }

        /// Checks what names the key: its id and team id are 1 to 64 printable ASCII letters, digits, dots, dashes or
        /// underscores (as the app server's JWT carries them), its topics (if given) a non-empty list of app ids. The
        /// public key itself is the gateway's to read.
        /// - Throws: `InvalidArgument` naming the field.
        public func checkNames() throws(CoreError) {
            let idCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
            for (name, value) in [("key id", id), ("team id", teamId)]
            where value.isEmpty || value.count > 64 || !value.allSatisfy(idCharacters.contains) {
                throw CoreError(
                    .invalidArgument, "\(name) \(QuotedText.quote(value)) is not 1 to 64 letters, digits, dots, dashes or underscores",
                    fix: "give the \(name) as the app server's JWT carries it (Apple's are 10 characters, e.g. ABC123DEFG)")
            }
            if let topics {
                if let bad = topics.first(where: { AppID.validated($0) == nil }) {
                    throw CoreError(
                        .invalidArgument, "topic \(QuotedText.quote(bad)) is not an app id", fix: "give app ids such as com.example.messenger")
                }
                if topics.isEmpty {
                    throw CoreError(.invalidArgument, "the list of topics is empty", fix: "give at least one app id, or none for all apps")
                }
            }
        }
    }

    /// `AddKey` reply.
    public struct AddKeyReply: Codable, Hashable, Sendable {
        public var key: KeyMessage
        public init(key: KeyMessage) { self.key = key }
    }

    /// `Keys` reply.
    public struct KeysReply: Codable, Hashable, Sendable {
        public var keys: [KeyMessage]
        public init(keys: [KeyMessage]) { self.keys = keys }
    }

    /// `RemoveKey` parameters.
    public struct RemoveKeyParameters: Codable, Hashable, Sendable {
        public var id: String
        public init(id: String) { self.id = id }
    }

    /// `Token` parameters.
    public struct TokenParameters: Codable, Hashable, Sendable {
        public var app: String
        public init(app: String) { self.app = app }
    }

    /// `Token` reply.
    public struct TokenReply: Codable, Hashable, Sendable {
        public var token: String
        public var gateway: String
        public var topic: String
        public init(token: String, gateway: String, topic: String) {
            self.token = token
            self.gateway = gateway
            self.topic = topic
        }
    }
}
