/// An app's identifier: the `CFBundleIdentifier` of its manifest, for example `com.example.finite-task`.
public struct AppID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The identifier text.
    public let rawValue: String

    /// Wraps an identifier without validating it; use ``AppID/validated(_:)`` for input from outside.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    /// The identifier if it is a valid reverse-DNS bundle identifier, else nil.
    ///
    /// Allowed: ASCII letters, digits, `-` and `.`, at most 255 characters, no empty component, not starting
    /// with a dot. The same rule keeps the identifier safe as a file and cgroup name.
    public static func validated(_ text: String) -> AppID? {
        guard !text.isEmpty, text.utf8.count <= 255 else { return nil }
        let components = text.split(separator: ".", omittingEmptySubsequences: false)
        guard components.allSatisfy({ !$0.isEmpty }) else { return nil }
        let allowed = text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E
        }
        return allowed ? AppID(text) : nil
    }

    public static func < (lhs: AppID, rhs: AppID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
