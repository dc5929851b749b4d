import OffstageCore

/// What a push of the model asks for: waking the app, showing an alert, or both (SPEC NT-4).
enum ModelPushKind: String, CaseIterable, Hashable, Sendable {
    /// `content-available: 1`, push type `background`, nothing shown.
    case background
    /// An alert with a sound, push type `alert`; the app is not woken.
    case alert
    /// An alert that also has `content-available: 1`: shown, and the app woken.
    case both
}

/// A push the gateway hands in, as a command's argument, written so a reproduction reads as Swift source. The shell
/// numbers the pushes it hands in (`p1`, `p2`, …), so a push keeps a meaning when the shrinker drops the ones before.
struct ModelPush: Hashable, Sendable, CustomStringConvertible {
    /// What it asks for.
    var kind: ModelPushKind
    /// Its `apns-collapse-id`, from a small set so that pushes share one; nil for none.
    var collapse: String?
    /// Its `apns-expiration`, this many milliseconds after it arrives (0 or less: already past); nil for none.
    var expiresInMs: Int?
    /// `apns-expiration: 0`: delivered at once or never (SPEC NT-5).
    var attemptOnce: Bool

    /// Creates a push.
    init(_ kind: ModelPushKind, collapse: String? = nil, expiresInMs: Int? = nil, attemptOnce: Bool = false) {
        self.kind = kind
        self.collapse = collapse
        self.expiresInMs = expiresInMs
        self.attemptOnce = attemptOnce
    }

    /// The push `id` for `app`, accepted by the gateway at `now`.
    func remotePush(id: String, app: AppID, at now: Instant) -> RemotePush {
        let wakes = kind != .alert
        let alert = kind == .background ? nil : PushAlert(title: "news", body: id)
        let aps = PushAPS(alert: alert, sound: alert == nil ? nil : "default", contentAvailable: wakes)
        var fields: [String] = []
        if wakes { fields.append(#""content-available":1"#) }
        if alert != nil { fields.append(#""alert":{"title":"news","body":"\#(id)"},"sound":"default""#) }
        return RemotePush(
            id: id, app: app, type: kind == .background ? .background : .alert, priority: wakes && alert == nil ? 5 : 10,
            collapseID: collapse, expiresAt: expiresInMs.map { now + .milliseconds($0) }, acceptedAt: now, aps: aps,
            payload: #"{"aps":{"# + fields.joined(separator: ",") + #"},"id":"\#(id)"}"#, attemptOnce: attemptOnce)
    }

    /// Simpler forms, simplest first, for the shrinker: fewer options, then a plain background push.
    var simplifications: [ModelPush] {
        var simpler: [ModelPush] = []
        if attemptOnce { simpler.append(ModelPush(kind, collapse: collapse, expiresInMs: expiresInMs)) }
        if expiresInMs != nil { simpler.append(ModelPush(kind, collapse: collapse, attemptOnce: attemptOnce)) }
        if collapse != nil { simpler.append(ModelPush(kind, expiresInMs: expiresInMs, attemptOnce: attemptOnce)) }
        if kind == .both {
            simpler.append(ModelPush(.background, collapse: collapse, expiresInMs: expiresInMs, attemptOnce: attemptOnce))
        }
        return simpler
    }

    var description: String {
        var parts = [".\(kind)"]
        if let collapse { parts.append("collapse: \"\(collapse)\"") }
        if let expiresInMs { parts.append("expiresInMs: \(expiresInMs)") }
        if attemptOnce { parts.append("attemptOnce: true") }
        return ".init(\(parts.joined(separator: ", ")))"
    }
}
