/// The `apns-push-type` values APNs documents.
public enum PushType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A notification that triggers a user interaction: an alert, a badge or a sound.
    case alert
    /// A notification that delivers content in the background and triggers no user interaction (priority 5 only).
    case background
    /// A notification that asks for the device's location (topic `<app>.location-query`).
    case location
    /// An incoming Voice-over-IP call (topic `<app>.voip`, payload up to 5120 bytes).
    case voip
    /// An update for a watch complication (topic `<app>.complication`).
    case complication
    /// A change for a File Provider extension (topic `<app>.pushkit.fileprovider`).
    case fileprovider
    /// A device-management wake-up (the topic is the MDM topic, used as it is).
    case mdm
    /// An update of a Live Activity (topic `<app>.push-type.liveactivity`).
    case liveactivity
    /// A Push to Talk update (topic `<app>.voip-ptt`).
    case pushtotalk
    /// A widget reload (topic `<app>.push-type.widgets`).
    case widgets
    /// A Controls reload (topic `<app>.push-type.controls`), documented by Apple beside `widgets`.
    case controls

    /// The suffix APNs expects after the bundle identifier in `apns-topic` for this push type, if any.
    public var topicSuffix: String? {
        switch self {
        case .alert, .background, .mdm: nil
        case .location: ".location-query"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The largest payload APNs accepts for this push type: 5120 bytes for VoIP, 4096 for every other type.
    public var maximumPayloadBytes: Int { self == .voip ? 5120 : 4096 }

    /// The largest payload of any push type (what a request body may hold before its type is known).
    public static let largestPayloadBytes = 5120

    /// The app a topic names for this push type: the topic without this type's suffix (a `.voip` topic names its
    /// app), or the topic itself when it carries no suffix.
    public func app(forTopic topic: String) -> String {
        if let suffix = topicSuffix, topic.hasSuffix(suffix), topic.utf8.count > suffix.utf8.count {
            return String(topic.dropLast(suffix.count))
        }
        return topic
    }
}

/// The `apns-priority` values APNs documents.
public enum PushPriority: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Send immediately.
    case immediate = 10
    /// Send at a time that takes the device's power into account (the only priority of background pushes).
    case powerConsidered = 5
    /// Prioritise the device's power over everything else.
    case lowest = 1
}
