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

    static func voipApps(_ reply: ModesControlInterface.VoIPAppsReply) -> String {
        guard !reply.apps.isEmpty else { return "no VoIP apps with a keep-alive handler or a socket" }
        var rows = [["APP", "KEEP-ALIVE", "NEXT TIMEOUT", "SOCKET", "RELAUNCH"]]
        for app in reply.apps {
            rows.append([
                app.app, app.keepAliveTimeout.map { "every \(Int($0)) s" } ?? "-", app.keepAliveExpiresAt.map(time) ?? "-",
                app.socket ? (app.watched ? "watched (app suspended)" : "app reads it") : "-", app.relaunchAt.map(time) ?? "-",
            ])
        }
        return layout(rows)
    }
}
