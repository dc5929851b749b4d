import OffstageProtocol

/// Plain-text layouts of the long-running background modes.
extension Table {
    static func audioSessions(_ reply: ModesControlInterface.AudioSessionsReply) -> String {
        var lines: [String] = []
        if reply.interruption { lines.append("a system audio interruption holds the audio") }
        guard !reply.sessions.isEmpty else { return (lines + ["no audio sessions"]).joined(separator: "\n") }
        var rows = [["APP", "CATEGORY", "ACTIVE", "PLAYING", "BACKGROUND"]]
        for session in reply.sessions {
            var category = session.category
            if session.mixWithOthers { category += " (mixes)" }
            let active = session.interruptedBy.map { "interrupted by \($0)" } ?? (session.active ? "yes" : "no")
            rows.append([session.app, category, active, session.playing ? "yes" : "no", session.hold ?? "-"])
        }
        return (lines + [layout(rows)]).joined(separator: "\n")
    }
}
