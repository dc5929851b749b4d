/// Identifies a finite-length background task (SPEC BT-1). Zero is ``invalid``.
public struct BackgroundTaskID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The number; unique among the daemon's tasks.
    public var rawValue: UInt64

    /// Wraps a number.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// The identifier returned when a task cannot begin.
    public static let invalid = BackgroundTaskID(0)

    /// Whether this is a real task.
    public var isValid: Bool { self != .invalid }

    public static func < (lhs: BackgroundTaskID, rhs: BackgroundTaskID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(UInt64.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
