/// The `Urgency` of a Web Push message (RFC 8030 §5.3): how soon it is worth the device's power.
public enum WebPushUrgency: String, Sendable, Hashable, CaseIterable, Codable {
    /// On power and Wi-Fi only (advertisements).
    case veryLow = "very-low"
    /// On power or Wi-Fi (topic updates).
    case low
    /// On neither power nor Wi-Fi (chat or calendar messages); the default.
    case normal
    /// Even on low battery (incoming phone calls, time-sensitive alerts).
    case high

    /// The APNs priority the device inbox handles the message with: high → 10, normal → 5, low and very-low → 1.
    public var priority: PushPriority {
        switch self {
        case .high: .immediate
        case .normal: .powerConsidered
        case .low, .veryLow: .lowest
        }
    }
}
