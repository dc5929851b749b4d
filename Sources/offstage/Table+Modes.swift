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

    static func location(_ reply: ModesControlInterface.LocationReply) -> String {
        var lines = ["source: \(reply.source)", "status: \(reply.status)"]
        if let fix = reply.lastFix {
            var text = "last fix: " + String(format: "%.5f, %.5f ±%.0f m", fix.latitude, fix.longitude, fix.horizontalAccuracy)
            if let speed = fix.speed { text += String(format: ", %.1f m/s", speed) }
            lines.append(text)
        } else {
            lines.append("last fix: none yet")
        }
        guard !reply.apps.isEmpty else { return (lines + ["no app receives locations"]).joined(separator: "\n") }
        var rows = [["APP", "UPDATES", "SIGNIFICANT CHANGES", "BACKGROUND"]]
        for app in reply.apps {
            var updates = "off"
            if app.updating {
                updates = String(format: "every %.0f m", app.distanceFilter ?? 0)
                if app.allowsBackground == true { updates += ", background" }
            }
            rows.append([app.app, updates, app.significantChanges ? "monitored" : "off", app.hold ?? "-"])
        }
        return (lines + [layout(rows)]).joined(separator: "\n")
    }

    static func accessories(_ reply: ModesControlInterface.AccessoryLinksReply) -> String {
        guard !reply.accessories.isEmpty else { return "no registered accessories" }
        var rows = [["APP", "ACCESSORY", "PATH", "MODE", "CONNECTED", "SESSION", "BACKGROUND"]]
        for link in reply.accessories {
            let connected = link.connected.map { $0 ? "yes" : "no" } ?? "not looked yet"
            let session = link.session ? (link.watched ? "watched (app suspended)" : "app reads it") : "-"
            rows.append([link.app, link.name, link.path, link.mode, connected, session, link.hold ?? "-"])
        }
        return layout(rows)
    }
}
