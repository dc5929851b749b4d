import Foundation

extension AudioSession {
    /// Posted on the main thread when an audio interruption begins or ends (`AVAudioSession.interruptionNotification`).
    /// `userInfo` holds ``interruptionTypeKey`` (an ``InterruptionType`` raw value), on the end
    /// ``interruptionOptionKey`` (an ``InterruptionOptions`` raw value), and ``interruptionReasonKey`` (a string).
    public static let interruptionNotification = Notification.Name("OffstageAudioSessionInterruption")
    /// The `userInfo` key of the interruption's type.
    public static let interruptionTypeKey = "AVAudioSessionInterruptionTypeKey"
    /// The `userInfo` key of an ended interruption's options.
    public static let interruptionOptionKey = "AVAudioSessionInterruptionOptionKey"
    /// The `userInfo` key of who interrupted, for people.
    public static let interruptionReasonKey = "OffstageAudioSessionInterruptionReasonKey"

    /// The daemon's interruption callback, on the main thread: when it begins every player pauses first (the app is
    /// about to lose the audio and, in the background, to be suspended), then the app hears it.
    @MainActor
    func handleInterruption(began: Bool, shouldResume: Bool, reason: String) {
        let interruption = Interruption(
            type: began ? .began : .ended, options: shouldResume ? .shouldResume : [], reason: reason)
        let subscribers = state.withLock { state in
            if began { state.active = false }
            return Array(state.subscribers.values)
        }
        if began { AudioActivity.shared.pauseAll() }
        var userInfo: [String: Any] = [
            Self.interruptionTypeKey: interruption.type.rawValue, Self.interruptionReasonKey: interruption.reason,
        ]
        if !began { userInfo[Self.interruptionOptionKey] = interruption.options.rawValue }
        NotificationCenter.default.post(name: Self.interruptionNotification, object: self, userInfo: userInfo)
        for subscriber in subscribers { subscriber.yield(interruption) }
    }
}
