import OffstageCore

/// The accessory half of `io.offstage.ModesControl` (SPEC MODE-4, CLI-1): every registration, and simulated events.
extension ModesControlInterface {
    /// One registered accessory, on the wire.
    public struct AccessoryLinkMessage: Codable, Hashable, Sendable {
        public var app: String
        public var name: String
        public var path: String
        public var mode: String
        public var connected: Bool?
        public var session: Bool
        public var watched: Bool
        public var hold: String?

        public init(
            app: String, name: String, path: String, mode: String, connected: Bool?, session: Bool, watched: Bool,
            hold: String?
        ) {
            self.app = app
            self.name = name
            self.path = path
            self.mode = mode
            self.connected = connected
            self.session = session
            self.watched = watched
            self.hold = hold
        }

        /// The wire form of one of `app`'s links, with the accessory mode's verdict on the app.
        public init(app: AppID, link: Accessories.Link, hold: ModeHold?) {
            self.init(
                app: app.rawValue, name: link.registration.name, path: link.registration.path,
                mode: link.registration.mode.rawValue, connected: link.connected, session: link.session != nil,
                watched: link.session?.armed ?? false, hold: hold?.description)
        }

        // Optionals are written as null (not left out) so scripts can rely on every key being present.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(name, forKey: .name)
            try container.encode(path, forKey: .path)
            try container.encode(mode, forKey: .mode)
            try container.encode(connected, forKey: .connected)
            try container.encode(session, forKey: .session)
            try container.encode(watched, forKey: .watched)
            try container.encode(hold, forKey: .hold)
        }
    }

    /// `Accessories` and `AccessoryEvent` reply.
    public struct AccessoryLinksReply: Codable, Hashable, Sendable {
        public var accessories: [AccessoryLinkMessage]
        public init(accessories: [AccessoryLinkMessage]) { self.accessories = accessories }
    }

    /// `AccessoryEvent` parameters.
    public struct AccessoryEventParameters: Codable, Hashable, Sendable {
        public var app: String
        public var name: String
        public var event: String
        public init(app: String, name: String, event: String) {
            self.app = app
            self.name = name
            self.event = event
        }

        /// The core's event, or what is wrong with the message.
        public func accessoryEvent() -> Result<AccessoryEvent, CoreError> {
            guard let event = AccessoryEvent(rawValue: event) else {
                return .failure(
                    CoreError(
                        .invalidArgument, "\(QuotedText.quote(self.event)) is not an accessory event",
                        fix: "use one of \(AccessoryEvent.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            return .success(event)
        }
    }
}
