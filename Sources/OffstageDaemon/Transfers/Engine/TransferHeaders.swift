import Foundation

/// The response headers a transfer reads, parsed without I/O or a clock: tested on their own.
enum TransferHeaders {
    /// A `Content-Range` value (RFC 9110 §14.4): the bytes `first...last` of a resource of `total` bytes (nil: `*`,
    /// unknown), or, for `bytes */total` (with a 416), no range and the resource's size.
    struct ContentRange: Equatable, Sendable {
        /// The range sent, both ends included; nil for the unsatisfied form `bytes */total`.
        var range: ClosedRange<Int64>?
        /// The whole resource's size, when the server knows it.
        var total: Int64?
    }

    /// Parses `bytes first-last/total`, `bytes first-last/*` or `bytes */total`; nil for anything else (another unit,
    /// `last` before `first`, `last` past the total).
    static func contentRange(_ value: String) -> ContentRange? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let total: Int64?
        if parts[1] == "*" {
            total = nil
        } else {
            guard let size = decimal(parts[1]) else { return nil }
            total = size
        }
        if parts[0] == "*" {
            guard total != nil else { return nil }
            return ContentRange(range: nil, total: total)
        }
        let ends = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard ends.count == 2, let first = decimal(ends[0]), let last = decimal(ends[1]), first <= last else { return nil }
        if let total, last >= total { return nil }
        return ContentRange(range: first...last, total: total)
    }

    /// Seconds from `now` the server asks to wait (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date (IMF-fixdate, or
    /// the obsolete RFC 850 and asctime forms); a date in the past is 0. Nil when the value is neither.
    static func retryAfter(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = decimal(Substring(trimmed)) { return Double(seconds) }
        guard let date = httpDate(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// An HTTP-date in any of its three forms, or nil.
    static func httpDate(_ value: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        // IMF-fixdate, RFC 850, asctime (its day padded with a space, or not).
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            let collapsed = format.hasPrefix("EEE MMM") ? value.split(separator: " ").joined(separator: " ") : value
            if let date = formatter.date(from: collapsed) { return date }
        }
        return nil
    }

    /// The media type of a `Content-Type` value, without parameters, lowercased (`text/html; charset=utf-8` →
    /// `text/html`); nil when empty.
    static func mimeType(_ contentType: String) -> String? {
        let type = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type.isEmpty ? nil : type
    }

    /// The file name a `Content-Disposition` value suggests: `filename*` (RFC 8187, UTF-8 percent-encoded) before
    /// `filename`, reduced to its last path component; nil when there is none or it is not a usable name.
    static func filename(contentDisposition value: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in parameters(value) {
            switch parameter.name {
            case "filename*":
                // charset'language'percent-encoded; only UTF-8 (and its ASCII subset) is understood.
                let pieces = parameter.value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3, ["utf-8", "us-ascii"].contains(pieces[0].lowercased()) {
                    extended = String(pieces[2]).removingPercentEncoding
                }
            case "filename": plain = parameter.value
            default: break
            }
        }
        return (extended ?? plain).flatMap(safeFilename)
    }

    /// The last segment of `url`'s path, percent-decoded, when it is a usable file name.
    static func filename(url: String) -> String? {
        guard let parsed = URL(string: url) else { return nil }
        return safeFilename(parsed.lastPathComponent)
    }

    /// `name` reduced to its last path component (a server must not choose the folder); nil when nothing usable is
    /// left (empty, `.`, `..`, a NUL).
    static func safeFilename(_ name: String) -> String? {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let trimmed = last.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed != ".", trimmed != "..", !trimmed.contains("\0") else { return nil }
        return trimmed
    }

    /// The `name=value` parameters after the first `;` of a header value; names lowercased, quoted values unquoted.
    private static func parameters(_ value: String) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var characters = Substring(value)
        // Skip the disposition type.
        guard let firstSemicolon = characters.firstIndex(of: ";") else { return [] }
        characters = characters[characters.index(after: firstSemicolon)...]
        while !characters.isEmpty {
            characters = characters.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let equals = characters.firstIndex(of: "=") else { break }
            let name = characters[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            characters = characters[characters.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var parameterValue = ""
            if characters.first == "\"" {
                characters = characters.dropFirst()
                var escaped = false
                while let character = characters.first {
                    characters = characters.dropFirst()
                    if escaped {
                        parameterValue.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        parameterValue.append(character)
                    }
                }
                characters = characters.drop { $0 != ";" }
            } else {
                let end = characters.firstIndex(of: ";") ?? characters.endIndex
                parameterValue = characters[..<end].trimmingCharacters(in: .whitespaces)
                characters = characters[end...]
            }
            result.append((name, parameterValue))
        }
        return result
    }

    /// A non-negative decimal number of digits only (no sign, no spaces), or nil; nil too when it overflows.
    static func decimal(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }
}
