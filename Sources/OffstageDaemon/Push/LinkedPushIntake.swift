import Foundation
import OffstageCore
import OffstageHost
import OffstagePush

/// What the device does with a push the remote gateway sent over the link (decision 0035): it becomes the inbox's
/// push, with a Web Push message decrypted here, where the subscription's private key is.
enum LinkedPushIntake {
    /// The inbox's push for `linked`, or why it cannot be one (a body that does not decrypt, a subscription this
    /// device does not know): such a push is acknowledged and logged, never retried, since no retry can change it.
    static func push(_ linked: LinkedPush, store: OffstageStore) throws -> RemotePush {
        var accepted: AcceptedPush
        do {
            accepted = try linked.accepted(device: EmbeddedPushBackend.device)
        } catch {
            throw DeviceLinkError(description: error.description)
        }
        if let message = try? WebPushMessage(payload: accepted.payload), message.encrypted, let body = message.data {
            guard let row = try store.webPushSubscription(id: linked.token) else {
                throw DeviceLinkError(description: "Web Push message \(linked.apnsID) is for subscription \(linked.token), which this device never made.")
            }
            do {
                let keys = try WebPushUserAgentKeys(privateKeyRaw: row.privateKey, authSecret: row.authSecret)
                let plaintext = try WebPushDecryptor(keys: keys).decrypt(body)
                accepted.payload = WebPushMessage(data: plaintext, encrypted: false, topic: message.topic, urgency: message.urgency).payload
            } catch {
                throw DeviceLinkError(description: "Web Push message \(linked.apnsID) does not decrypt with its subscription's keys: \(error)")
            }
        }
        return RemotePush(accepted: accepted)
    }
}
