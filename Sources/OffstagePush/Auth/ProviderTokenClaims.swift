import Foundation
import JWTKit

/// The claims of an APNs provider token: `iss` (the team id) and `iat` (when it was signed, whole UNIX seconds).
///
/// The time checks are the gateway's, not jwt-kit's, because they answer different APNs reasons.
struct ProviderTokenClaims: JWTPayload {
    /// The team id.
    var iss: String
    /// When the token was signed.
    var iat: Date

    init(iss: String, iat: Date) {
        self.iss = iss
        self.iat = iat
    }

    enum CodingKeys: String, CodingKey { case iss, iat }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        iat = Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .iat))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        // APNs expects whole seconds.
        try container.encode(Int64(iat.timeIntervalSince1970.rounded(.down)), forKey: .iat)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
