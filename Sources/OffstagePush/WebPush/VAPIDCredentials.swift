import Crypto
import Foundation

/// The VAPID token and key a request carries (RFC 8292), not yet verified.
///
/// Two forms are read:
/// - RFC 8292 §3: `Authorization: vapid t=<JWT>, k=<base64url public key>` (py_vapid's `Vapid02`, pywebpush 2.x);
/// - the older drafts: `Authorization: WebPush <JWT>` with `Crypto-Key: p256ecdsa=<base64url public key>` (py_vapid's
///   `Vapid01`); `Crypto-Key` may carry other parameters (`dh=…`) separated by `;` or `,`.
public struct VAPIDCredentials: Sendable, Hashable {
    /// The JWT.
    public var token: String
    /// The application server's public key, 65 bytes (uncompressed P-256 point).
    public var publicKey: Data

    /// Creates credentials.
    public init(token: String, publicKey: Data) {
        self.token = token
        self.publicKey = publicKey
    }

    /// The credentials of a request's `Authorization` and `Crypto-Key` values: nil when `Authorization` is absent
    /// or uses neither VAPID scheme, an error when it does but is malformed.
    public static func parse(authorization: String?, cryptoKey: String?) throws(VAPIDError) -> VAPIDCredentials? {
        guard let authorization = authorization?.trimmingCharacters(in: .whitespaces) else { return nil }
        let scheme = authorization.prefix { $0 != " " }.lowercased()
        let rest = authorization.dropFirst(scheme.count).trimmingCharacters(in: .whitespaces)
        switch scheme {
        case "vapid":
            var token: String?
            var key: String?
            for parameter in rest.split(separator: ",") {
                let pair = parameter.trimmingCharacters(in: .whitespaces)
                guard let equals = pair.firstIndex(of: "=") else {
                    throw .malformed("The vapid parameter \(pair.prefix(40)) has no value; send vapid t=<JWT>, k=<public key>.")
                }
                let name = pair[..<equals].lowercased()
                let value = String(pair[pair.index(after: equals)...]).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
                if name == "t" { token = value } else if name == "k" { key = value }
            }
            guard let token, !token.isEmpty else {
                throw .malformed("The vapid authorization has no t=<JWT>; send vapid t=<JWT>, k=<public key>.")
            }
            guard let key else {
                throw .malformed("The vapid authorization has no k=<public key>; send vapid t=<JWT>, k=<public key>.")
            }
            return VAPIDCredentials(token: token, publicKey: try decodeKey(key))
        case "webpush":
            guard !rest.isEmpty else {
                throw .malformed("The WebPush authorization carries no JWT; send WebPush <JWT> with Crypto-Key: p256ecdsa=<key>.")
            }
            let parameters = (cryptoKey ?? "").split(whereSeparator: { $0 == ";" || $0 == "," })
            guard
                let key = parameters.lazy.map({ $0.trimmingCharacters(in: .whitespaces) })
                    .first(where: { $0.lowercased().hasPrefix("p256ecdsa=") })
            else {
                throw .malformed("The WebPush authorization has no Crypto-Key: p256ecdsa=<public key>; send the VAPID key there.")
            }
            return VAPIDCredentials(token: rest, publicKey: try decodeKey(String(key.dropFirst("p256ecdsa=".count))))
        default:
            return nil
        }
    }

    /// Whether `key` is an uncompressed P-256 public key (65 bytes, a point on the curve): what a VAPID key and an
    /// `applicationServerKey` must be.
    public static func isPublicKey(_ key: Data) -> Bool {
        key.count == 65 && (try? P256.Signing.PublicKey(x963Representation: key)) != nil
    }

    private static func decodeKey(_ text: String) throws(VAPIDError) -> Data {
        guard let key = Base64URL.decode(text), isPublicKey(key) else {
            throw .malformed("The VAPID key \(text.prefix(100)) is not a base64url uncompressed P-256 public key (65 bytes).")
        }
        return key
    }
}

/// Why a request's VAPID credentials were refused.
public enum VAPIDError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request carries no VAPID authorization (401).
    case missing
    /// The authorization is VAPID but malformed: missing `t` or `k`, or `k` not a P-256 key.
    case malformed(String)
    /// The JWT is not an ES256 JWT signed by the key, or its claims are not VAPID's.
    case invalidToken(String)
    /// The JWT's `aud` is not the origin the request reached.
    case wrongAudience(String, expected: [String])
    /// The JWT has no `exp`.
    case missingExpiry
    /// The JWT's `exp` is past.
    case expired(Date)
    /// The JWT's `exp` is more than 24 hours ahead (RFC 8292 §2).
    case expiryTooFar(Date)
    /// The JWT's `sub` is neither a `mailto:` nor an `https:` URI (RFC 8292 §2.1).
    case badSubject(String)

    /// What is wrong and how the application server fixes it.
    public var description: String {
        switch self {
        case .missing:
            "The request has no VAPID authorization; send Authorization: vapid t=<JWT>, k=<public key> (RFC 8292)."
        case .malformed(let detail): detail
        case .invalidToken(let detail): detail
        case .wrongAudience(let audience, let expected):
            "The VAPID aud \(audience.prefix(200)) is not this push service's origin; use \(expected.joined(separator: " or "))."
        case .missingExpiry:
            "The VAPID JWT has no exp; set exp at most 24 hours ahead."
        case .expired(let date):
            "The VAPID JWT expired at \(Int64(date.timeIntervalSince1970)); sign a new one."
        case .expiryTooFar(let date):
            "The VAPID JWT's exp \(Int64(date.timeIntervalSince1970)) is more than 24 hours ahead; sign with an earlier exp."
        case .badSubject(let subject):
            "The VAPID sub \(subject.prefix(200)) is not a mailto: or https: URI; put a contact there or leave it out."
        }
    }
}
