import OffstageCore

/// The invariant of a ``UsageTrace`` that a candidate trace breaks, with what breaks it.
public enum UsageTraceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The trace ends before it starts.
    case endsBeforeStart(start: Instant, end: Instant)
    /// The app labels are not sorted, or one appears twice.
    case appsNotSortedAndDistinct([String])
    /// A session belongs to an app missing from the trace's app list.
    case unknownApp(AppSession)
    /// A session ends where it starts (it holds no foreground time).
    case emptySession(AppSession)
    /// A session starts before the one listed before it.
    case sessionsNotSortedByStart(AppSession, after: AppSession)
    /// A session lies (partly) outside the trace's `[start, end)`.
    case sessionOutsideTrace(AppSession)
    /// Two sessions of the same app share foreground time.
    case overlappingSessions(AppSession, AppSession)
    /// A screen-on span is empty.
    case emptyScreenOnSpan(Span)
    /// A screen-on span starts before the previous one ended (they are not sorted and disjoint).
    case screenOnNotSortedAndDisjoint(Span, after: Span)
    /// A screen-on span lies (partly) outside the trace's `[start, end)`.
    case screenOnOutsideTrace(Span)
    /// A session is not inside a single screen-on span: an app was in the foreground with the screen off.
    case sessionOutsideScreenOn(AppSession)

    public var description: String {
        switch self {
        case .endsBeforeStart(let start, let end):
            "the trace ends (\(end)) before it starts (\(start))"
        case .appsNotSortedAndDistinct(let apps):
            "app labels must be sorted and distinct: \(apps)"
        case .unknownApp(let session):
            "session \(session) belongs to an app that is not in the trace's app list"
        case .emptySession(let session):
            "session \(session) is empty: every session must hold some foreground time"
        case .sessionsNotSortedByStart(let session, let previous):
            "sessions must be sorted by start: \(session) comes after \(previous)"
        case .sessionOutsideTrace(let session):
            "session \(session) lies outside the trace"
        case .overlappingSessions(let first, let second):
            "sessions of one app never overlap: \(first) overlaps \(second)"
        case .emptyScreenOnSpan(let span):
            "screen-on span \(span) is empty"
        case .screenOnNotSortedAndDisjoint(let span, let previous):
            "screen-on spans must be sorted and disjoint: \(span) comes after \(previous)"
        case .screenOnOutsideTrace(let span):
            "screen-on span \(span) lies outside the trace"
        case .sessionOutsideScreenOn(let session):
            "every session lies inside a screen-on span: \(session) does not"
        }
    }
}
