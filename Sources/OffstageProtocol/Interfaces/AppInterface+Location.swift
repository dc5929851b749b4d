import OffstageCore

extension AppInterface {
    /// A position on the wire (`type Location`, SPEC MODE-3): the core's ``LocationFix`` with its time in seconds
    /// since the Unix epoch. `io.offstage.ModesControl` sends the same fields.
    public struct LocationMessage: Codable, Hashable, Sendable {
        public var latitude: Double
        public var longitude: Double
        public var altitude: Double?
        public var horizontalAccuracy: Double
        public var verticalAccuracy: Double?
        public var speed: Double?
        public var course: Double?
        public var timestamp: Double

        /// The wire form of a fix.
        public init(_ fix: LocationFix) {
            latitude = fix.latitude
            longitude = fix.longitude
            altitude = fix.altitude
            horizontalAccuracy = fix.horizontalAccuracy
            verticalAccuracy = fix.verticalAccuracy
            speed = fix.speed
            course = fix.course
            timestamp = fix.timestamp.secondsSinceEpoch
        }

        /// The fix it carries.
        public var fix: LocationFix {
            LocationFix(
                latitude: latitude, longitude: longitude, altitude: altitude, horizontalAccuracy: horizontalAccuracy,
                verticalAccuracy: verticalAccuracy, speed: speed, course: course,
                timestamp: Instant(secondsSinceEpoch: timestamp))
        }
    }
}

extension AppInterface.LocationMessage: VarlinkDirectEncodable {
    // The daemon writes a location for every fix it delivers: by hand, with the members `Codable` writes (nil ones
    // left out).
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"latitude\":")
        try json.number(latitude)
        json.raw(",\"longitude\":")
        try json.number(longitude)
        if let altitude {
            json.raw(",\"altitude\":")
            try json.number(altitude)
        }
        json.raw(",\"horizontalAccuracy\":")
        try json.number(horizontalAccuracy)
        if let verticalAccuracy {
            json.raw(",\"verticalAccuracy\":")
            try json.number(verticalAccuracy)
        }
        if let speed {
            json.raw(",\"speed\":")
            try json.number(speed)
        }
        if let course {
            json.raw(",\"course\":")
            try json.number(course)
        }
        json.raw(",\"timestamp\":")
        try json.number(timestamp)
        json.raw("}")
    }
}
