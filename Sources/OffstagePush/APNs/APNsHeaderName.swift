/// The request header names of the provider API.
public enum APNsHeaderName {
    /// `authorization`: `bearer <provider JWT>`.
    public static let authorization = "authorization"
    /// `apns-id`: the notification's UUID.
    public static let id = "apns-id"
    /// `apns-push-type`.
    public static let pushType = "apns-push-type"
    /// `apns-priority`: 10, 5 or 1.
    public static let priority = "apns-priority"
    /// `apns-expiration`: UNIX seconds, 0 for "do not store".
    public static let expiration = "apns-expiration"
    /// `apns-collapse-id`: up to 64 bytes.
    public static let collapseID = "apns-collapse-id"
    /// `apns-topic`: the app's bundle identifier, with the push type's suffix where it has one.
    public static let topic = "apns-topic"

    /// The headers that may appear at most once (else `DuplicateHeaders`).
    static let singular: Set<String> = [authorization, id, pushType, priority, expiration, collapseID, topic]
}
