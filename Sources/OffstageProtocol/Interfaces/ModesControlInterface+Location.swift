import OffstageCore

/// The location half of `io.offstage.ModesControl` (SPEC MODE-3): the source, its status and who listens.
extension ModesControlInterface {
    /// One app that receives locations, on the wire.
    public struct LocationAppMessage: Codable, Hashable, Sendable {
        public var app: String
        public var updating: Bool
        public var distanceFilter: Double?
        public var desiredAccuracy: Double?
        public var allowsBackground: Bool?
        public var significantChanges: Bool
        public var hold: String?

        /// The wire form of what the location component knows of `app`, and its verdict on the app.
        public init(app: AppID, updating: LocationUpdates.Updating?, significantChanges: Bool, hold: ModeHold?) {
            self.app = app.rawValue
            self.updating = updating != nil
            distanceFilter = updating?.request.distanceFilter
            desiredAccuracy = updating?.request.desiredAccuracy
            allowsBackground = updating?.request.allowsBackground
            self.significantChanges = significantChanges
            self.hold = hold?.description
        }

        // Optionals are written as null (not left out) so scripts can rely on every key being present.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(updating, forKey: .updating)
            try container.encode(distanceFilter, forKey: .distanceFilter)
            try container.encode(desiredAccuracy, forKey: .desiredAccuracy)
            try container.encode(allowsBackground, forKey: .allowsBackground)
            try container.encode(significantChanges, forKey: .significantChanges)
            try container.encode(hold, forKey: .hold)
        }
    }

    /// The reply of every location method: the source and who listens.
    public struct LocationReply: Codable, Hashable, Sendable {
        /// `none`, `replay`, `gpsd` or `fixed`.
        public var kind: String
        /// The source, for a person ("replaying walk.gpx at 10× …"); with no source, "none".
        public var source: String
        /// How the source is doing, or, with none, how to set one.
        public var status: String
        public var lastFix: AppInterface.LocationMessage?
        public var apps: [LocationAppMessage]

        public init(kind: String, source: String, status: String, lastFix: AppInterface.LocationMessage?, apps: [LocationAppMessage]) {
            self.kind = kind
            self.source = source
            self.status = status
            self.lastFix = lastFix
            self.apps = apps
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kind, forKey: .kind)
            try container.encode(source, forKey: .source)
            try container.encode(status, forKey: .status)
            try container.encode(lastFix, forKey: .lastFix)
            try container.encode(apps, forKey: .apps)
        }
    }

    /// `ReplayTrack` parameters.
    public struct ReplayTrackParameters: Codable, Hashable, Sendable {
        public var path: String
        public var speed: Double?
        public var loop: Bool?
        public init(path: String, speed: Double? = nil, loop: Bool? = nil) {
            self.path = path
            self.speed = speed
            self.loop = loop
        }
    }

    /// `SetLocation` parameters.
    public struct SetLocationParameters: Codable, Hashable, Sendable {
        public var latitude: Double
        public var longitude: Double
        public var accuracy: Double?
        public init(latitude: Double, longitude: Double, accuracy: Double? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.accuracy = accuracy
        }
    }

    /// `UseGpsd` parameters.
    public struct UseGpsdParameters: Codable, Hashable, Sendable {
        public var host: String?
        public var port: Int?
        public init(host: String? = nil, port: Int? = nil) {
            self.host = host
            self.port = port
        }
    }

    /// The `BadTrack` error's parameters.
    public struct BadTrackError: Codable, Hashable, Sendable {
        public var file: String
        public var line: Int?
        public var message: String
        public var fix: String
        public init(file: String, line: Int?, message: String, fix: String) {
            self.file = file
            self.line = line
            self.message = message
            self.fix = fix
        }
    }
}
