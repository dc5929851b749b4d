import Crypto

/// A P-256 key pair for provider tokens, as `push-keys add --generate` makes one.
///
/// The private key is PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the format of the `.p8` files Apple hands out;
/// the public key is the PEM the gateway registers (`-----BEGIN PUBLIC KEY-----`).
public struct ProviderKeyPair: Sendable, Hashable {
    /// The private key, PKCS#8 PEM: keep it with the app server.
    public var privateKeyPEM: String
    /// The public key, PEM: register it with the gateway.
    public var publicKeyPEM: String

    /// Generates a new random key pair.
    public static func generate() -> ProviderKeyPair {
        let key = P256.Signing.PrivateKey()
        return ProviderKeyPair(privateKeyPEM: key.pemRepresentation, publicKeyPEM: key.publicKey.pemRepresentation)
    }

    /// The public key PEM of a private key PEM (PKCS#8 or SEC 1), for registering an existing `.p8` key.
    /// The public key PEM in its canonical form, or an error when `pem` is not a P-256 public key (an ES256 key):
    /// what the gateway registers.
    public static func canonicalPublicKeyPEM(_ pem: String) throws -> String {
        try P256.Signing.PublicKey(pemRepresentation: pem).pemRepresentation
    }

    public static func publicKeyPEM(ofPrivateKeyPEM pem: String) throws -> String {
        try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey.pemRepresentation
    }
}
