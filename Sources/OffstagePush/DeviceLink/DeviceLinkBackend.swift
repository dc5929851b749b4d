import Foundation

/// The storage port of the device link (decision 0035): devices pull the pushes stored for them and acknowledge what
/// their inbox holds; they register their tokens and subscriptions.
///
/// `offstage-push` implements it on PostgreSQL. The route calls it from many tasks at once.
public protocol DeviceLinkBackend: Sendable {
    /// Whether `secret` is the enrolled secret of `device`.
    func authenticate(device: String, secret: String) async throws -> Bool
    /// Upserts the device's tokens and subscriptions (a token or subscription of another device is refused with
    /// ``DeviceLinkError``, and nothing is changed).
    func register(_ registrations: DeviceRegistrations, device: String) async throws
    /// Deletes the acknowledged deliveries of `device`, records the device as connected to this node, then claims
    /// and returns the pushes stored for it, oldest first, waiting up to `wait` for one when there are none.
    ///
    /// A device has one pull open at a time, so every stored push it has not acknowledged is sent again: a batch lost
    /// with a node is sent by the next node the device reaches. Rows another node's pull has locked at this moment
    /// are skipped, not waited for (`FOR UPDATE SKIP LOCKED`). Expired pushes are deleted with a record instead of
    /// sent. Returns early, possibly empty, when the node shuts down.
    func pull(device: String, acknowledging acks: [String], wait: Duration) async throws -> [LinkedPush]
}
