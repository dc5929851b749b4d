import OffstageCore
import OffstageProtocol

/// Plain-text layouts of local notifications.
extension Table {
    /// Pending and delivered notifications, then the badges and the device's time zone.
    static func notifications(_ reply: NotificationsControlInterface.NotificationsReply, app: String?) -> String {
        let whose = app.map { " of \($0)" } ?? ""
        var sections: [String] = []
        if reply.pending.isEmpty {
            sections.append("no pending notifications\(whose)")
        } else {
            var rows = [["APP", "IDENTIFIER", "DUE", "TRIGGER", "SHOWS"]]
            for entry in reply.pending {
                rows.append([
                    entry.app, cell(entry.request.identifier), time(entry.due), entry.trigger,
                    shows(entry.request.content),
                ])
            }
            sections.append("pending (\(reply.pending.count)):\n" + layout(rows))
        }
        if reply.delivered.isEmpty {
            sections.append("no delivered notifications\(whose)")
        } else {
            var rows = [["APP", "IDENTIFIER", "DELIVERED", "TO", "SHOWS"]]
            for entry in reply.delivered {
                var to = entry.route == "app" ? "app (waiting for its answer)" : entry.route
                if entry.late { to += ", late (due \(time(entry.due)))" }
                rows.append([
                    entry.app, cell(entry.request.identifier), time(entry.deliveredAt), to,
                    shows(entry.request.content),
                ])
            }
            sections.append("delivered (\(reply.delivered.count)):\n" + layout(rows))
        }
        var footer: [String] = []
        if !reply.badges.isEmpty {
            footer.append("badges: " + reply.badges.map { "\($0.app) \($0.badge)" }.joined(separator: ", "))
        }
        footer.append("time zone: \(reply.timeZone) (calendar triggers without their own follow it)")
        return (sections + [footer.joined(separator: "\n")]).joined(separator: "\n\n")
    }

    /// What `notifications tap` did.
    static func tapped(app: String, identifier: String, action: String) -> String {
        let name = QuotedText.quote(identifier)
        switch action {
        case "default": return "tapped \(name) of \(app): the app opens and hears the response"
        case "dismiss": return "dismissed \(name) of \(app)"
        default: return "chose \(QuotedText.quote(action)) on \(name) of \(app): the app hears the response"
        }
    }

    /// What `notifications clear` did.
    static func cleared(_ removed: Int, app: String?) -> String {
        let whose = app.map { " of \($0)" } ?? ""
        switch removed {
        case 0: return "no delivered notifications\(whose) to remove"
        case 1: return "removed 1 delivered notification\(whose)"
        default: return "removed \(removed) delivered notifications\(whose)"
        }
    }

    /// Title and body, sound and badge, on one line.
    static func shows(_ content: NotificationsInterface.ContentMessage) -> String {
        var parts: [String] = []
        let text = [content.title, content.body].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
        if !text.isEmpty { parts.append(cell(text)) }
        if let sound = content.sound { parts.append("sound \(cell(sound))") }
        if let badge = content.badge { parts.append("badge \(badge)") }
        return parts.isEmpty ? "-" : parts.joined(separator: ", ")
    }

    /// An app's text in a table cell: on one line, with control characters escaped (no terminal escape reaches the
    /// screen), cut at 40 characters.
    static func cell(_ text: String, limit: Int = 40) -> String {
        var shown = ""
        for character in text.prefix(limit) {
            for scalar in character.unicodeScalars {
                let value = scalar.value
                if value < 0x20 || value == 0x7F || (0x80..<0xA0).contains(value)
                    || [.lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
                {
                    shown += scalar == "\n" ? "\\n" : "\\u{\(String(value, radix: 16))}"
                } else {
                    shown.unicodeScalars.append(scalar)
                }
            }
        }
        return text.count > limit ? shown + "…" : shown
    }
}
