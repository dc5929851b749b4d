/// Why a track file could not be read: which file, where in it, what was wrong and what to do about it.
///
/// One type for every problem so the CLI can show `description` as is and scripts can match `code.rawValue`,
/// which never changes once released.
public struct LocationTrackError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem; the raw values are stable identifiers.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The file could not be read at all, or is not a regular file.
        case unreadableFile = "track.unreadable-file"
        /// The file is larger than the daemon's `location.maximumTrackBytes`.
        case tooLarge = "track.too-large"
        /// The content is neither GPX (XML) nor NMEA 0183.
        case unknownFormat = "track.unknown-format"
        /// The XML is not well formed, or its root is not `<gpx>`.
        case malformedGPX = "track.malformed-gpx"
        /// An NMEA line is not a sentence, or a field of a sentence we read cannot be parsed.
        case malformedSentence = "track.malformed-sentence"
        /// An NMEA sentence's checksum does not match its content, or it has none.
        case checksumMismatch = "track.checksum-mismatch"
        /// A coordinate is missing or not a number.
        case malformedCoordinate = "track.malformed-coordinate"
        /// A latitude outside −90 … 90 or a longitude outside −180 … 180.
        case coordinateOutOfRange = "track.coordinate-out-of-range"
        /// A time that is not ISO 8601 (GPX) or not hhmmss / ddmmyy (NMEA).
        case malformedTime = "track.malformed-time"
        /// A point is earlier than the one before it.
        case timeGoesBackwards = "track.time-goes-backwards"
        /// Some GPX points have a `<time>` and others do not, so no one spacing is right.
        case mixedTimes = "track.mixed-times"
        /// The file holds no point or sentence with a position at all.
        case emptyTrack = "track.empty"
        /// The file holds positions, but the receiver says none of them is a fix (RMC status V, GGA quality 0).
        case noValidFix = "track.no-valid-fix"
    }

    /// What kind of problem it is.
    public var code: Code
    /// The file's name as the user gave it.
    public var file: String
    /// The 1-based line the problem is on, when there is one.
    public var line: Int?
    /// What was wrong, e.g. "checksum *4F does not match *4E".
    public var problem: String
    /// What to do about it.
    public var fix: String

    /// Creates an error; `problem` and `fix` are shown as written.
    public init(_ code: Code, file: String, line: Int? = nil, problem: String, fix: String) {
        self.code = code
        self.file = file
        self.line = line
        self.problem = problem
        self.fix = fix
    }

    /// "track.nmea line 12: checksum *4F does not match *4E: the log is corrupt; re-record it or remove the line".
    public var description: String {
        let place = line.map { "\(file) line \($0)" } ?? file
        return "\(place): \(problem): \(fix)"
    }
}
