import Foundation

/// The URL- and filename-safe base64 alphabet of RFC 4648 §5, without padding: how Web Push writes keys, auth
/// secrets, salts and VAPID tokens.
public enum Base64URL {
    /// `data` in base64url, without `=` padding.
    public static func encode(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of `text` in base64url, with or without padding; nil when `text` holds other characters.
    public static func decode(_ text: some StringProtocol) -> Data? {
        guard text.utf8.allSatisfy({ isAlphabet($0) || $0 == UInt8(ascii: "=") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.replacingOccurrences(of: "=", with: "")
        if base64.utf8.count % 4 == 1 { return nil }
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    /// Whether `byte` is a letter, a digit, `-` or `_`.
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        byte.isASCIIAlphanumeric || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
