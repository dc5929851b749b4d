import OffstageCore

extension DaemonEngine {
    /// Persists what the push inbox decided (SPEC NT-4, NT-5).
    func performPush(_ action: PushAction) {
        // TODO(push store): written with the inbox table.
        _ = action
    }
}
