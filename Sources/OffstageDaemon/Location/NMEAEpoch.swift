/// What the sentences of one NMEA epoch (one time stamp) said together, before it becomes a `TrackPoint`.
struct NMEAEpoch {
    /// The line of the epoch's first sentence, for errors.
    var line: Int
    /// Seconds since midnight UTC.
    var timeOfDay: Double
    /// Days since 1970-01-01 from RMC's date, when an RMC gave one.
    var daysSinceEpoch: Int?
    /// RMC's verdict: true for status A, false for V or mode indicator N.
    var rmcValid: Bool?
    /// GGA's fix quality: 0 is no fix.
    var ggaQuality: Int?
    /// GSA's fix type: 1 none, 2 2D, 3 3D.
    var fixType: Int?
    /// Degrees, from RMC or GGA.
    var latitude: Double?
    /// Degrees, from RMC or GGA.
    var longitude: Double?
    /// Metres above mean sea level (GGA).
    var altitude: Double?
    /// Horizontal dilution of precision (GGA or GSA).
    var hdop: Double?
    /// Vertical dilution of precision (GSA).
    var vdop: Double?
    /// Metres: the root of the summed squared latitude and longitude standard deviations (GST).
    var horizontalSigma: Double?
    /// Metres: the altitude standard deviation (GST).
    var verticalSigma: Double?
    /// Metres per second (RMC knots converted).
    var speed: Double?
    /// Degrees from true north (RMC).
    var course: Double?

    /// An epoch at `timeOfDay` first seen on `line`, with nothing else known yet.
    init(line: Int, timeOfDay: Double) {
        self.line = line
        self.timeOfDay = timeOfDay
    }

    /// Whether the receiver claimed a fix: no sentence says otherwise and RMC or GGA says so.
    var hasFix: Bool {
        rmcValid != false && ggaQuality != 0 && fixType != 1 && (rmcValid == true || ggaQuality != nil)
    }

    /// Takes what `other` knows and this epoch does not; the first sentence to say something wins, as the
    /// sentences of one epoch agree.
    mutating func merge(_ other: NMEAEpoch) {
        daysSinceEpoch = daysSinceEpoch ?? other.daysSinceEpoch
        // A "no fix" from any sentence stands.
        rmcValid = rmcValid == false || other.rmcValid == false ? false : (rmcValid ?? other.rmcValid)
        ggaQuality = ggaQuality ?? other.ggaQuality
        fixType = fixType ?? other.fixType
        latitude = latitude ?? other.latitude
        longitude = longitude ?? other.longitude
        altitude = altitude ?? other.altitude
        hdop = hdop ?? other.hdop
        vdop = vdop ?? other.vdop
        horizontalSigma = horizontalSigma ?? other.horizontalSigma
        verticalSigma = verticalSigma ?? other.verticalSigma
        speed = speed ?? other.speed
        course = course ?? other.course
    }

    /// `timeOfDay` as hh:mm:ss for messages.
    static func clock(_ timeOfDay: Double) -> String {
        let whole = Int(timeOfDay)
        let text = [whole / 3600, whole / 60 % 60, whole % 60].map { $0 < 10 ? "0\($0)" : "\($0)" }
        return text.joined(separator: ":")
    }
}
