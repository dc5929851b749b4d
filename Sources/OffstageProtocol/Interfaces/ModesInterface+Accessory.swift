import OffstageCore

/// The accessory half of `io.offstage.Modes` (SPEC MODE-4): registrations and sessions.
extension ModesInterface {
    /// `RegisterAccessory` parameters.
    public struct RegisterAccessoryParameters: Codable, Hashable, Sendable {
        public var name: String
        public var path: String
        public var mode: String
        public init(name: String, path: String, mode: String) {
            self.name = name
            self.path = path
            self.mode = mode
        }

        /// The core's registration, or what is wrong with the message.
        public func registration() -> Result<AccessoryRegistration, CoreError> {
            let modes = AccessoryRegistration.modes.map(\.rawValue)
            guard let mode = BackgroundMode(rawValue: mode), AccessoryRegistration.modes.contains(mode) else {
                return .failure(
                    CoreError(
                        .invalidArgument, "\(QuotedText.quote(self.mode)) is not an accessory mode",
                        fix: "use one of \(modes.joined(separator: ", "))"))
            }
            do throws(CoreError) {
                return .success(try AccessoryRegistration(name: name, path: path, mode: mode).validated())
            } catch {
                return .failure(error)
            }
        }
    }

    /// An accessory the app registered, on the wire.
    public struct AccessoryMessage: Codable, Hashable, Sendable {
        public var name: String
        public var path: String
        public var mode: String
        public var connected: Bool
        public var session: Bool
        public init(name: String, path: String, mode: String, connected: Bool, session: Bool) {
            self.name = name
            self.path = path
            self.mode = mode
            self.connected = connected
            self.session = session
        }

        /// The wire form of what the accessory component knows of one link.
        public init(_ link: Accessories.Link) {
            self.init(
                name: link.registration.name, path: link.registration.path, mode: link.registration.mode.rawValue,
                connected: link.connected ?? false, session: link.session != nil)
        }
    }

    /// `RegisterAccessory` reply.
    public struct RegisterAccessoryReply: Codable, Hashable, Sendable {
        public var accessory: AccessoryMessage
        public init(accessory: AccessoryMessage) { self.accessory = accessory }
    }

    /// `UnregisterAccessory` and `HandOffAccessorySession` parameters.
    public struct AccessoryNameParameters: Codable, Hashable, Sendable {
        public var name: String
        public init(name: String) { self.name = name }
    }

    /// `Accessories` reply.
    public struct AccessoriesReply: Codable, Hashable, Sendable {
        public var accessories: [AccessoryMessage]
        public init(accessories: [AccessoryMessage]) { self.accessories = accessories }
    }

    /// `HandOffAccessorySession` reply: what the daemon found the channel to be.
    public struct HandOffAccessorySessionReply: Codable, Hashable, Sendable {
        /// `character-device`, `fifo` or `socket`.
        public var kind: String
        public init(kind: String) { self.kind = kind }
    }
}
