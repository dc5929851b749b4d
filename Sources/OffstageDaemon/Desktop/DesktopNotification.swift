/// One notification to show on the desktop, as the freedesktop Desktop Notifications specification's `Notify` takes
/// it (SPEC NT-2).
public struct DesktopNotification: Sendable, Hashable {
    /// The name of the app the notification is about (the server may show it or group by it).
    public var appName: String
    /// The id of a notification this one replaces in place; 0 for a new one.
    public var replacesID: UInt32
    /// An icon name from the theme or a `file://` URI; empty for none.
    public var icon: String
    /// The one-line summary.
    public var summary: String
    /// The body text (servers with the "body-markup" capability read a small subset of HTML in it).
    public var body: String
    /// The buttons, in order; an action with the key "default" is the click on the notification itself.
    public var actions: [DesktopNotificationAction]
    /// Extra data for the server ("urgency", "category", "desktop-entry", …), sent as `a{sv}`.
    public var hints: [String: DesktopHint]
    /// Milliseconds before the notification expires; -1 lets the server decide, 0 never expires.
    public var expireTimeout: Int32

    /// A notification; everything but the summary may be left out.
    public init(
        appName: String = "", replacesID: UInt32 = 0, icon: String = "", summary: String, body: String = "",
        actions: [DesktopNotificationAction] = [], hints: [String: DesktopHint] = [:], expireTimeout: Int32 = -1
    ) {
        self.appName = appName
        self.replacesID = replacesID
        self.icon = icon
        self.summary = summary
        self.body = body
        self.actions = actions
        self.hints = hints
        self.expireTimeout = expireTimeout
    }
}

/// One button of a notification: the key comes back in `ActionInvoked`, the label is shown.
public struct DesktopNotificationAction: Sendable, Hashable {
    /// What `ActionInvoked` reports when the user picks it ("default" for a click on the body).
    public var key: String
    /// What the button says.
    public var label: String

    /// An action with `key`, shown as `label`.
    public init(key: String, label: String) {
        self.key = key
        self.label = label
    }
}

/// The value of one hint: the types the specification's standard hints use.
public enum DesktopHint: Sendable, Hashable {
    /// A string hint ("category", "desktop-entry", "sound-name", …).
    case string(String)
    /// An integer hint ("x", "y").
    case int32(Int32)
    /// A byte hint ("urgency": 0 low, 1 normal, 2 critical).
    case byte(UInt8)
    /// A boolean hint ("resident", "transient", "suppress-sound", …).
    case bool(Bool)

    /// The hint as the variant's content.
    var value: DBusValue {
        switch self {
        case .string(let text): .string(text)
        case .int32(let number): .int32(number)
        case .byte(let byte): .byte(byte)
        case .bool(let flag): .bool(flag)
        }
    }
}

extension DesktopNotification {
    /// The arguments of `Notify(s app_name, u replaces_id, s app_icon, s summary, s body, as actions,
    /// a{sv} hints, i expire_timeout)`; hints sorted by key so the same notification is always the same bytes.
    var notifyArguments: [DBusValue] {
        let hintType = DBusType.dictEntry(key: .string, value: .variant)
        let hintEntries = hints.sorted { $0.key < $1.key }.map { key, hint in
            DBusValue.dictEntry(key: .string(key), value: .variant(hint.value))
        }
        return [
            .string(appName), .uint32(replacesID), .string(icon), .string(summary), .string(body),
            .strings(actions.flatMap { [$0.key, $0.label] }), .array(element: hintType, hintEntries),
            .int32(expireTimeout),
        ]
    }
}
