import NIOHTTP1
import OffstageCore

/// The engine's use of a validator (SPEC TR-4): read from a response, sent back in If-Range.
///
/// A resumed download sends it back in `If-Range`, so the server answers with the rest of the same version (206) or,
/// when the resource changed, with all of the new one (200); the part file never splices two versions.
extension TransferValidator {
    /// The validator of a response, or nil when it carries neither header (empty values count as absent).
    init?(headers: HTTPHeaders) {
        let etag = headers.first(name: "ETag").flatMap { $0.isEmpty ? nil : $0 }
        let lastModified = headers.first(name: "Last-Modified").flatMap { $0.isEmpty ? nil : $0 }
        guard etag != nil || lastModified != nil else { return nil }
        self.init(etag: etag, lastModified: lastModified)
    }

    /// Whether ``etag`` is a strong entity tag: only a strong one may be sent in If-Range (RFC 9110 §13.1.5); a weak
    /// one (`W/"…"`) says two versions are equivalent, not byte-identical.
    var hasStrongETag: Bool {
        guard let etag else { return false }
        return !etag.hasPrefix("W/") && !etag.hasPrefix("w/")
    }

    /// The value to send in If-Range: the strong ETag, else the Last-Modified date; nil when there is neither (a
    /// resume then sends Range alone, as curl's `-C -` does, since nothing better can be checked).
    var ifRange: String? {
        hasStrongETag ? etag : lastModified
    }

    /// Whether `other` is known to name another version: the ETags are compared when both have one, else the dates
    /// when both have one. Without a common field nothing is known, and the answer is false.
    func differs(from other: TransferValidator) -> Bool {
        if let etag, let otherETag = other.etag { return etag != otherETag }
        if let lastModified, let otherDate = other.lastModified { return lastModified != otherDate }
        return false
    }

    /// For messages: the ETag, else the date.
    var summary: String {
        etag ?? lastModified ?? "none"
    }
}
