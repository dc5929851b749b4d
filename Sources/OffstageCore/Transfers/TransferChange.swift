/// A change asked of one transfer.
public enum TransferChange: String, Hashable, Sendable, CaseIterable {
    /// End it as cancelled.
    case cancel
    /// Stop it until resumed.
    case pause
    /// Let a paused task run again.
    case resume
}
