import OffstageCore

/// A half-open interval of time, `[start, end)`: it contains `start` but not `end`.
///
/// Half-open spans tile without overlap: a span ending at `t` and one starting at `t` share no instant.
public struct Span: Hashable, Sendable, CustomStringConvertible {
    /// The first instant inside the span.
    public let start: Instant
    /// The first instant after the span.
    public let end: Instant

    /// Creates the span `[start, end)`; `end` must not be before `start`.
    public init(start: Instant, end: Instant) {
        precondition(start <= end, "a span cannot end before it starts (\(start) > \(end))")
        self.start = start
        self.end = end
    }

    /// The span of `duration` that starts at `start`.
    public init(start: Instant, duration: Duration) {
        self.init(start: start, end: start + duration)
    }

    /// How long the span lasts.
    public var duration: Duration { end - start }

    /// Whether the span holds no instant at all (`start == end`).
    public var isEmpty: Bool { start == end }

    /// Whether `instant` lies inside the span (`start <= instant < end`).
    public func contains(_ instant: Instant) -> Bool { start <= instant && instant < end }

    /// Whether every instant of `other` lies inside this span (an empty span lies inside any span that holds its start
    /// or ends where it is).
    public func contains(_ other: Span) -> Bool { start <= other.start && other.end <= end }

    /// Whether the two spans share at least one instant.
    public func overlaps(_ other: Span) -> Bool { start < other.end && other.start < end }

    /// The instants the two spans share, or nil if they share none.
    public func intersection(_ other: Span) -> Span? {
        let lower = max(start, other.start)
        let upper = min(end, other.end)
        return lower < upper ? Span(start: lower, end: upper) : nil
    }

    public var description: String { "[\(start), \(end))" }
}
