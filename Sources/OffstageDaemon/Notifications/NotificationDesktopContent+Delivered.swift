import OffstageCore

extension NotificationDesktopContent {
    /// The freedesktop theme's sound for a notification that asks for the system's sound (`default`).
    static let defaultSoundName = "message-new-instant"
    /// The label of the action a click on the notification itself chooses (most desktops do not show it).
    static let defaultActionLabel = "Open"

    /// How a delivered notification looks on the desktop: its title first (the subtitle, then the app, when it has
    /// none), the subtitle and body under it as plain text, the category's actions as buttons, its sound from the
    /// sound theme or the app's bundle.
    ///
    /// - Parameters:
    ///   - category: the app's category the notification names, if registered.
    ///   - bundlePath: the app's installed bundle, where its sound files are.
    ///   - expireTimeout: milliseconds before the desktop hides it; -1 lets the desktop decide.
    init(_ record: DeliveredNotification, category: NotificationCategory?, bundlePath: String?, expireTimeout: Int32) {
        let content = record.request.content
        var summary = content.title
        var lines = [content.subtitle, content.body]
        if summary.isEmpty {
            summary = content.subtitle.isEmpty ? record.app.rawValue : content.subtitle
            lines[0] = ""
        }
        var actions = [Action(identifier: NotificationResponse.defaultAction, label: Self.defaultActionLabel)]
        actions += (category?.actions ?? []).map { Action(identifier: $0.identifier, label: $0.title) }
        // A push's text is not checked as an app's is (APNs carries any JSON string): a NUL, which D-Bus cannot
        // carry, is shown as the replacement character instead of losing the notification.
        let shown = { (text: String) in text.replacingOccurrences(of: "\0", with: "\u{FFFD}") }
        self.init(
            appName: record.app.rawValue, summary: shown(summary), body: shown(lines.filter { !$0.isEmpty }.joined(separator: "\n")),
            actions: actions.map { Action(identifier: shown($0.identifier), label: shown($0.label)) },
            sound: Self.sound(content.sound, bundlePath: bundlePath), key: record.key.description,
            threadIdentifier: shown(content.threadIdentifier), expireTimeout: expireTimeout)
    }

    /// The sound for a notification's sound name: `default` is the theme's, a file name one in the app's bundle. A
    /// name that would leave the bundle (a path) plays nothing.
    static func sound(_ name: String?, bundlePath: String?) -> Sound? {
        guard let name, !name.isEmpty else { return nil }
        if name == "default" { return .themeName(defaultSoundName) }
        guard let bundlePath, !name.contains("/"), name != ".", name != ".." else { return nil }
        return .file(bundlePath + "/" + name)
    }
}
