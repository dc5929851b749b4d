import Foundation
import OffstageCore

extension LocationTrack {
    /// Reads an NMEA 0183 log: RMC and GGA for position, time, speed and course, GSA and GST for accuracy, from
    /// the GPS (GP), multi-constellation (GN), GLONASS (GL), Galileo (GA) and BeiDou (GB, BD) talkers.
    ///
    /// Every `$` line's checksum is verified, because a corrupt sentence would put a fix kilometres away.
    /// Sentences with the same time (the same second at 1 Hz) are one epoch and make one point; GSA, which has
    /// no time, belongs to the epoch before it. An epoch is skipped when the receiver says it has no fix (RMC
    /// status V, GGA quality 0, GSA fix type 1). Other sentences (GSV, VTG, proprietary `$P…`), `#` comments
    /// (gpsfake's) and `!` lines (AIS) are ignored.
    struct NMEAReader {
        /// The file's name, for errors.
        let file: String
        /// The DOP-to-metres factor.
        let settings: LocationSourceSettings

        /// The talkers read; others are ignored.
        static let talkers: Set<Substring> = ["GP", "GN", "GL", "GA", "GB", "BD"]

        /// The track in `data`; throws `LocationTrackError`.
        func read(_ data: Data) throws -> LocationTrack {
            var epochs: [NMEAEpoch] = []
            // Split as bytes: in a Swift string "\r\n" is one character that "\n" would not match, and receivers
            // end their sentences with CR LF.
            let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            for (index, rawLine) in lines.enumerated() {
                let line = String(decoding: rawLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("!") { continue }
                let number = index + 1
                guard line.hasPrefix("$") else {
                    throw error(.malformedSentence, number, "\"\(line.prefix(20))\" is not an NMEA sentence",
                        "an NMEA log has one $-sentence a line; remove the line")
                }
                let fields = try verifiedFields(line, line: number)
                let address = fields[0]
                guard address.count >= 5, Self.talkers.contains(address.prefix(2)) else { continue }
                let sentence = NMEASentence(fields: fields, line: number, reader: self)
                switch address.suffix(3) {
                case "RMC": try merge(sentence.rmc(), into: &epochs, line: number)
                case "GGA": try merge(sentence.gga(), into: &epochs, line: number)
                case "GST": try merge(sentence.gst(), into: &epochs, line: number)
                case "GSA":
                    // No time of its own: it describes the epoch whose sentences came just before.
                    if var last = epochs.popLast() {
                        try last.merge(sentence.gsa())
                        epochs.append(last)
                    }
                default: continue
                }
            }
            return try makeTrack(epochs)
        }

        /// Adds `sentence` to the last epoch when it has the same time, else starts a new epoch.
        private func merge(_ sentence: NMEAEpoch?, into epochs: inout [NMEAEpoch], line: Int) {
            guard let sentence else { return }
            if var last = epochs.last, last.timeOfDay == sentence.timeOfDay {
                last.merge(sentence)
                epochs[epochs.count - 1] = last
            } else {
                epochs.append(sentence)
            }
        }

        /// The comma-separated fields of a sentence between `$` and `*`, after checking its checksum.
        private func verifiedFields(_ line: String, line number: Int) throws -> [Substring] {
            guard let star = line.lastIndex(of: "*") else {
                throw error(.checksumMismatch, number, "the sentence has no *checksum",
                    "the line is truncated or not NMEA 0183; re-record the log or remove the line")
            }
            let body = line[line.index(after: line.startIndex)..<star]
            let stated = line[line.index(after: star)...]
            let computed = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
            let computedText = String(format: "%02X", Int(computed))
            guard stated.count == 2, let value = UInt8(stated, radix: 16) else {
                throw error(.checksumMismatch, number, "checksum *\(stated) is not two hex digits (it should be *\(computedText))",
                    "the line is truncated; re-record the log or remove the line")
            }
            guard value == computed else {
                throw error(.checksumMismatch, number, "checksum *\(stated.uppercased()) does not match *\(computedText)",
                    "the log is corrupt; re-record it or remove the line")
            }
            return body.split(separator: ",", omittingEmptySubsequences: false)
        }

        /// Turns the epochs into points: skips those without a fix and checks that time moves forwards.
        private func makeTrack(_ epochs: [NMEAEpoch]) throws -> LocationTrack {
            guard !epochs.isEmpty else {
                throw LocationTrackError(.emptyTrack, file: file, problem: "the log has no RMC or GGA sentence",
                    fix: "record RMC and GGA sentences (most receivers send them by default)")
            }
            var points: [TrackPoint] = []
            var start: Double?
            var previous: Double?
            var lastDate: Int?
            var dayShift = 0.0
            var recordedStart: Instant?
            for epoch in epochs {
                if let days = epoch.daysSinceEpoch { lastDate = days }
                guard epoch.hasFix, let latitude = epoch.latitude, let longitude = epoch.longitude else { continue }
                var seconds = epoch.timeOfDay + Double(epoch.daysSinceEpoch ?? lastDate ?? 0) * 86_400 + dayShift
                // A log without dates that runs past midnight: the time of day wraps round.
                if epoch.daysSinceEpoch == nil, let previous, previous - seconds > 43_200 {
                    dayShift += 86_400
                    seconds += 86_400
                }
                if let previous, seconds < previous {
                    throw error(.timeGoesBackwards, epoch.line,
                        "the time \(NMEAEpoch.clock(epoch.timeOfDay)) is \(previous - seconds) s before the previous fix's",
                        "the log is out of order or mixes two recordings; sort or split it")
                }
                if start == nil, lastDate != nil {
                    recordedStart = Instant(secondsSinceEpoch: seconds)
                }
                start = start ?? seconds
                previous = seconds
                let unit = settings.userEquivalentRangeError
                points.append(
                    TrackPoint(
                        offset: seconds - start!, latitude: latitude, longitude: longitude,
                        altitude: epoch.fixType == 2 ? nil : epoch.altitude,
                        horizontalAccuracy: epoch.horizontalSigma ?? epoch.hdop.map { $0 * unit },
                        verticalAccuracy: epoch.fixType == 2 ? nil : (epoch.verticalSigma ?? epoch.vdop.map { $0 * unit }),
                        speed: epoch.speed, course: epoch.course))
            }
            guard !points.isEmpty else {
                throw LocationTrackError(.noValidFix, file: file,
                    problem: "none of the \(epochs.count) epochs in the log has a fix (RMC status V or GGA quality 0)",
                    fix: "record again where the receiver sees the sky, after it reports a fix")
            }
            return try LocationTrack(name: file, format: .nmea, points: points, recordedStart: recordedStart)
        }

        /// A `LocationTrackError` on line `line` of this file.
        func error(_ code: LocationTrackError.Code, _ line: Int, _ problem: String, _ fix: String)
            -> LocationTrackError
        {
            LocationTrackError(code, file: file, line: line, problem: problem, fix: fix)
        }
    }
}
