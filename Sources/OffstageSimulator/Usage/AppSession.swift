import OffstageCore

/// One foreground session of an app: the app was on screen, in use, from `start` until `end`.
///
/// The start of a session is an **open** of the app (what the freshness metrics count).
public struct AppSession: Hashable, Sendable, CustomStringConvertible {
    /// The app's label (for example `WhatsApp`).
    public let app: String
    /// When the app came to the foreground: the open.
    public let start: Instant
    /// When it left the foreground.
    public let end: Instant

    /// Creates a session; `end` must not be before `start` (the trace's validation rejects empty sessions).
    public init(app: String, start: Instant, end: Instant) {
        precondition(start <= end, "a session cannot end before it starts")
        self.app = app
        self.start = start
        self.end = end
    }

    /// Creates a session covering `span`.
    public init(app: String, span: Span) {
        self.init(app: app, start: span.start, end: span.end)
    }

    /// The session as a half-open span.
    public var span: Span { Span(start: start, end: end) }

    /// How long the app stayed in the foreground.
    public var duration: Duration { end - start }

    public var description: String { "\(app) \(span)" }
}
