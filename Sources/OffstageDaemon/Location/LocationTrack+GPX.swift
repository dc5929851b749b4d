import Foundation
import OffstageCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

extension LocationTrack {
    /// Reads GPX 1.0 and 1.1: the track points (`trkpt`) if there are any, else the route points (`rtept`),
    /// else the waypoints (`wpt`), because a file with a track usually also has waypoints that are places of
    /// interest, not positions of the receiver.
    struct GPXReader {
        /// The file's name, for errors.
        let file: String
        /// Spacing of untimed points and the DOP-to-metres factor.
        let settings: LocationSourceSettings

        /// The track in `data`; throws `LocationTrackError`.
        func read(_ data: Data) throws -> LocationTrack {
            let parser = XMLParser(data: data)
            let collector = Collector(file: file)
            parser.delegate = collector
            parser.shouldProcessNamespaces = false
            if !parser.parse() {
                if let error = collector.error { throw error }
                let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "the XML is not well formed"
                throw LocationTrackError(
                    .malformedGPX, file: file, line: max(parser.lineNumber, collector.lastLine, 1),
                    problem: "not well-formed XML (\(reason))",
                    fix: "the file is truncated or not GPX; export the track again")
            }
            if let error = collector.error { throw error }
            // libxml2 may accept a document that simply stops: an element still open means it was cut short.
            if let open = collector.openElement {
                throw LocationTrackError(
                    .malformedGPX, file: file, line: max(collector.lastLine, 1),
                    problem: "the file ends inside <\(open)>",
                    fix: "the file is truncated; export or copy the track again")
            }
            let chosen = ["trkpt", "rtept", "wpt"].lazy.map { kind in collector.points.filter { $0.kind == kind } }
                .first { !$0.isEmpty } ?? []
            guard !chosen.isEmpty else {
                throw LocationTrackError(
                    .emptyTrack, file: file, problem: "the GPX file has no trkpt, rtept or wpt",
                    fix: "export a track (not only its metadata) from the recording app")
            }
            return try makeTrack(chosen)
        }

        /// Validates the raw points and turns them into a track.
        private func makeTrack(_ raw: [RawPoint]) throws -> LocationTrack {
            let timed = raw.filter { $0.time != nil }.count
            if timed != 0 && timed != raw.count {
                let untimed = raw.first { $0.time == nil }!
                throw LocationTrackError(
                    .mixedTimes, file: file, line: untimed.line,
                    problem: "this <\(untimed.kind)> has no <time> but \(timed) of the \(raw.count) points have one",
                    fix: "give every point a <time>, or remove them all to replay at a fixed spacing")
            }
            var points: [TrackPoint] = []
            var start: Instant?
            var previous: Instant?
            for (index, point) in raw.enumerated() {
                let latitude = try number(point.latitude, "latitude", point)
                let longitude = try number(point.longitude, "longitude", point)
                try LocationTrack.checkRange(latitude: latitude, longitude: longitude, file: file, line: point.line)
                var offset = Double(index) * settings.untimedPointSpacing
                if let text = point.time {
                    guard let instant = ISO8601Time.instant(text.trimmingCharacters(in: .whitespacesAndNewlines))
                    else {
                        throw LocationTrackError(
                            .malformedTime, file: file, line: point.line,
                            problem: "<time>\(text)</time> is not an ISO 8601 date-time with a zone",
                            fix: "write it like 2024-05-18T09:30:00Z or 2024-05-18T11:30:00.5+02:00")
                    }
                    if let previous, instant < previous {
                        throw LocationTrackError(
                            .timeGoesBackwards, file: file, line: point.line,
                            problem: "time \(text) is \((previous - instant).inSeconds) s before the previous point's",
                            fix: "sort the points by time or remove the out-of-order ones")
                    }
                    start = start ?? instant
                    previous = instant
                    offset = (instant - start!).inSeconds
                }
                let hdop = try optionalNumber(point.hdop, "hdop", point)
                let vdop = try optionalNumber(point.vdop, "vdop", point)
                points.append(
                    TrackPoint(
                        offset: offset, latitude: latitude, longitude: longitude,
                        altitude: try optionalNumber(point.elevation, "ele", point),
                        horizontalAccuracy: hdop.map { $0 * settings.userEquivalentRangeError },
                        verticalAccuracy: vdop.map { $0 * settings.userEquivalentRangeError },
                        speed: try optionalNumber(point.speed, "speed", point),
                        course: try optionalNumber(point.course, "course", point)))
            }
            return try LocationTrack(name: file, format: .gpx, points: points, recordedStart: start)
        }

        private func number(_ text: String?, _ name: String, _ point: RawPoint) throws -> Double {
            guard let text else {
                throw LocationTrackError(
                    .malformedCoordinate, file: file, line: point.line,
                    problem: "<\(point.kind)> has no \(name) attribute",
                    fix: "every point needs lat and lon attributes in decimal degrees")
            }
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                throw LocationTrackError(
                    .malformedCoordinate, file: file, line: point.line,
                    problem: "\(name) \"\(text)\" of <\(point.kind)> is not a number",
                    fix: "write decimal degrees such as 52.5162885")
            }
            return value
        }

        private func optionalNumber(_ text: String?, _ name: String, _ point: RawPoint) throws -> Double? {
            guard let text else { return nil }
            guard let value = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), value.isFinite else {
                throw LocationTrackError(
                    .malformedCoordinate, file: file, line: point.line,
                    problem: "<\(name)>\(text)</\(name)> of <\(point.kind)> is not a number",
                    fix: "write a decimal number or remove the element")
            }
            return value
        }
    }

    /// A point as written in the file, before validation.
    struct RawPoint {
        var kind: String
        var line: Int
        var latitude: String?
        var longitude: String?
        var elevation: String?
        var time: String?
        var hdop: String?
        var vdop: String?
        var speed: String?
        var course: String?
    }

    /// The `XMLParser` delegate: collects every point with the children we read, ignoring everything else
    /// (metadata, extensions, names).
    final class Collector: NSObject, XMLParserDelegate {
        let file: String
        private(set) var points: [RawPoint] = []
        private(set) var error: LocationTrackError?
        private var stack: [String] = []
        /// The line of the last element seen: where a truncated file stopped.
        private(set) var lastLine = 0

        /// The innermost element not closed, if the document ended early.
        var openElement: String? { stack.last }
        private var current: RawPoint?
        private var text = ""

        init(file: String) { self.file = file }

        // Elements may carry a namespace prefix (`gpx:trkpt`); only the local name matters.
        private static func localName(_ name: String) -> String {
            name.split(separator: ":").last.map(String.init) ?? name
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            let name = Self.localName(elementName)
            lastLine = parser.lineNumber
            if stack.isEmpty && name != "gpx" {
                error = LocationTrackError(
                    .malformedGPX, file: file, line: parser.lineNumber,
                    problem: "the root element is <\(elementName)>, not <gpx>",
                    fix: "give a GPX 1.0 or 1.1 file")
                parser.abortParsing()
                return
            }
            stack.append(name)
            text = ""
            if ["trkpt", "rtept", "wpt"].contains(name) {
                current = RawPoint(
                    kind: name, line: parser.lineNumber, latitude: attributeDict["lat"], longitude: attributeDict["lon"])
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text += string
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            let name = Self.localName(elementName)
            lastLine = parser.lineNumber
            stack.removeLast()
            // Only direct children of a point: a <time> inside <extensions> is something else.
            if current != nil, let parent = stack.last, ["trkpt", "rtept", "wpt"].contains(parent) {
                switch name {
                case "ele": current?.elevation = text
                case "time": current?.time = text
                case "hdop": current?.hdop = text
                case "vdop": current?.vdop = text
                case "speed": current?.speed = text
                case "course": current?.course = text
                default: break
                }
            }
            if ["trkpt", "rtept", "wpt"].contains(name), let point = current {
                points.append(point)
                current = nil
            }
            text = ""
        }
    }
}
