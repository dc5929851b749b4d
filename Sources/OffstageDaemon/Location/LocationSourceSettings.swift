/// Every number the location sources use (SPEC MODE-3), with its default; the daemon's configuration fills it.
public struct LocationSourceSettings: Hashable, Sendable, Codable {
    // MARK: Tracks

    /// Seconds between consecutive points of a GPX file whose points carry no `<time>`. Default 1 s, the rate
    /// of most receivers.
    public var untimedPointSpacing: Double = 1
    /// Metres of error per unit of dilution of precision (the user equivalent range error): accuracy is
    /// HDOP (or VDOP) × this when a track gives a DOP but no error estimate. Default 5 m, a typical consumer
    /// GPS error.
    public var userEquivalentRangeError: Double = 5
    /// Horizontal accuracy in metres given to a point whose source estimates none (no GST, no HDOP, no gpsd
    /// `eph`/`epx`/`epy`). Default 10 m, a cautious figure for an unaided consumer receiver.
    public var defaultHorizontalAccuracy: Double = 10

    // MARK: Replay

    /// How much faster than recorded a track is replayed: 1 is real time, 10 is ten times faster. At least
    /// `minimumReplaySpeed`. Default 1.
    public var replaySpeed: Double = 1
    /// Whether a replay starts again from the first point after the last. Default false.
    public var replayLoops: Bool = false
    /// Track seconds between the last point of a looping replay and the first point of the next pass (scaled by
    /// `replaySpeed` like the track's own gaps). Default 1 s.
    public var replayLoopGap: Double = 1
    /// The largest track file read, in bytes: a larger one is refused at once (`track.too-large`) instead of being
    /// read for seconds. Default 64 MiB, four times a day recorded at 1 Hz in GPX.
    public var maximumTrackBytes: Int = 64 << 20

    // MARK: gpsd

    /// Host of the gpsd to read: a name or an IPv4/IPv6 address. Default 127.0.0.1, gpsd's own default.
    public var gpsdHost: String = "127.0.0.1"
    /// TCP port of gpsd. Default 2947, gpsd's registered port.
    public var gpsdPort: Int = 2947
    /// Seconds to wait for the TCP connection and then for gpsd's VERSION banner before calling the attempt
    /// failed. Default 5 s.
    public var gpsdConnectTimeout: Double = 5
    /// Seconds before the first reconnection after gpsd is lost; each failed attempt doubles it. Default 0.5 s.
    public var gpsdReconnectInitialDelay: Double = 0.5
    /// The most seconds between reconnection attempts. Default 30 s, so a gpsd that comes back is found within
    /// half a minute without hammering a host where it never runs.
    public var gpsdReconnectMaximumDelay: Double = 30
    /// Longest JSON line accepted from gpsd, in bytes; a longer one is counted as malformed and skipped.
    /// Default 64 KiB: gpsd's longest reports (SKY with many satellites) are a few KiB.
    public var gpsdMaximumLineLength: Int = 65_536

    /// The slowest replay speed accepted: below it a 1 s gap would take more than a minute and a half.
    public static let minimumReplaySpeed = 0.01
    /// The fastest replay speed accepted: a day's track in under a second. Faster is a replay with no time between
    /// fixes at all, a flood of fixes to every listening app.
    public static let maximumReplaySpeed = 100_000.0

    /// The defaults above.
    public init() {}

    /// What is wrong with these settings, one sentence each with its fix; empty when they are usable. The
    /// sources clamp what they must (a replay below `minimumReplaySpeed` runs at it), so a configuration reader
    /// should report these rather than rely on the clamping.
    public var problems: [String] {
        var problems: [String] = []
        if !(replaySpeed >= Self.minimumReplaySpeed && replaySpeed <= Self.maximumReplaySpeed) {
            problems.append("replay speed \(replaySpeed) is out of range; give a factor from 0.01 to 100000")
        }
        if !(1_024...(1 << 30)).contains(maximumTrackBytes) {
            problems.append("maximum track bytes \(maximumTrackBytes) is out of range; give 1024 to 1073741824 bytes")
        }
        if !(untimedPointSpacing > 0 && untimedPointSpacing <= 86_400) {
            problems.append("untimed point spacing \(untimedPointSpacing) s is out of range; give seconds from 0 to 86400, such as 1")
        }
        if !(replayLoopGap >= 0 && replayLoopGap <= 86_400) {
            problems.append("replay loop gap \(replayLoopGap) s is out of range; give 0 to 86400 seconds")
        }
        if !(1...65_535).contains(gpsdPort) {
            problems.append("gpsd port \(gpsdPort) is not a TCP port; give 1 to 65535 (gpsd listens on 2947)")
        }
        if gpsdHost.isEmpty { problems.append("the gpsd host is empty; give a name or address such as 127.0.0.1") }
        if !(gpsdConnectTimeout > 0 && gpsdConnectTimeout <= 3_600) {
            problems.append("the gpsd connect timeout must be more than 0 s and at most 3600 s")
        }
        if !(gpsdReconnectInitialDelay > 0 && gpsdReconnectInitialDelay <= gpsdReconnectMaximumDelay
            && gpsdReconnectMaximumDelay <= 86_400)
        {
            problems.append("gpsd reconnect delays must satisfy 0 < initial ≤ maximum ≤ 86400 s")
        }
        if !(1_024...(16 << 20)).contains(gpsdMaximumLineLength) {
            problems.append("the gpsd line limit must be from 1024 to 16777216 bytes")
        }
        for (name, value) in [
            ("user equivalent range error", userEquivalentRangeError),
            ("default horizontal accuracy", defaultHorizontalAccuracy),
        ] where !(value > 0 && value <= 1_000_000) {
            problems.append("\(name) \(value) m is out of range; give metres from 0 to 1000000, such as 5")
        }
        return problems
    }
}

extension LocationSourceSettings {
    // A configuration file's `location` object may give any subset of the keys; the rest keep their defaults.
    // `problems` says what is wrong with the values.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = LocationSourceSettings()
        func value<Value: Decodable>(_ key: CodingKeys, _ fallback: Value) throws -> Value {
            try container.decodeIfPresent(Value.self, forKey: key) ?? fallback
        }
        untimedPointSpacing = try value(.untimedPointSpacing, defaults.untimedPointSpacing)
        userEquivalentRangeError = try value(.userEquivalentRangeError, defaults.userEquivalentRangeError)
        defaultHorizontalAccuracy = try value(.defaultHorizontalAccuracy, defaults.defaultHorizontalAccuracy)
        replaySpeed = try value(.replaySpeed, defaults.replaySpeed)
        replayLoops = try value(.replayLoops, defaults.replayLoops)
        replayLoopGap = try value(.replayLoopGap, defaults.replayLoopGap)
        maximumTrackBytes = try value(.maximumTrackBytes, defaults.maximumTrackBytes)
        gpsdHost = try value(.gpsdHost, defaults.gpsdHost)
        gpsdPort = try value(.gpsdPort, defaults.gpsdPort)
        gpsdConnectTimeout = try value(.gpsdConnectTimeout, defaults.gpsdConnectTimeout)
        gpsdReconnectInitialDelay = try value(.gpsdReconnectInitialDelay, defaults.gpsdReconnectInitialDelay)
        gpsdReconnectMaximumDelay = try value(.gpsdReconnectMaximumDelay, defaults.gpsdReconnectMaximumDelay)
        gpsdMaximumLineLength = try value(.gpsdMaximumLineLength, defaults.gpsdMaximumLineLength)
    }
}
