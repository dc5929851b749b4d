import Foundation

/// The machine's time zone as an IANA name (SPEC NT-1: calendar notifications without a zone of their own follow the
/// device's). Read afresh from the files each time — Foundation's `TimeZone.current` is fixed when first read, so it
/// would miss a change while the daemon runs.
///
/// In order: the `TZ` environment variable when it names a zone, the target of the `/etc/localtime` link
/// (`…/zoneinfo/Europe/Berlin`), `/etc/timezone` (Debian), Foundation's guess, and UTC.
struct MachineTimeZone {
    /// The meta key under which the store remembers the machine's zone last seen, to notice a change across restarts.
    static let metaKey = "machineTimeZone"

    /// Where `localtime` and `timezone` are.
    var etc = "/etc"
    /// The environment, for `TZ`.
    var environment = ProcessInfo.processInfo.environment

    /// The machine's zone.
    var identifier: String {
        if let tz = environment["TZ"], let zone = Self.validated(tz.hasPrefix(":") ? String(tz.dropFirst()) : tz) {
            return zone
        }
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: etc + "/localtime"),
            let range = target.range(of: "zoneinfo/"),
            let zone = Self.validated(String(target[range.upperBound...]))
        {
            return zone
        }
        if let text = try? String(contentsOfFile: etc + "/timezone", encoding: .utf8),
            let zone = Self.validated(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return zone
        }
        return Self.validated(TimeZone.current.identifier) ?? "UTC"
    }

    /// The name if it is a time zone the calendar knows (`posix/Europe/Berlin` and `right/…` as the plain name).
    static func validated(_ name: String) -> String? {
        var name = name
        for prefix in ["posix/", "right/"] where name.hasPrefix(prefix) { name.removeFirst(prefix.count) }
        guard !name.isEmpty, name.utf8.count <= 64, !name.hasPrefix("/"), TimeZone(identifier: name) != nil else { return nil }
        return name
    }
}
