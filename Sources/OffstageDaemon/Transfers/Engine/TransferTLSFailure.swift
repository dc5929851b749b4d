import NIOSSL

/// Tells a TLS failure about trust from one that is not (SPEC TR-4). A certificate the device cannot verify —
/// self-signed, issued by an authority it does not trust, expired, not yet valid, or for another host name — is the
/// same on the next attempt: the task ends (the platform's `NSURLErrorServerCertificateUntrusted` and its kin are not
/// retried either). A handshake cut off by the network (a reset, an EOF) is transient like any connection error.
///
/// async-http-client hands NIOSSL's errors through as they are (on Linux: no Network.framework wrapper); a verify
/// failure is `NIOSSLError.handshakeFailed(.sslError(…))` whose BoringSSL error is `CERTIFICATE_VERIFY_FAILED`
/// (BoringSSL does not say which check failed: the reason lists the usual ones), a name that does not match is
/// `NIOSSLExtraError.failedToValidateHostname`.
enum TransferTLSFailure {
    /// The permanent reason when `error` says the certificate of `host`'s server cannot be trusted: what was wrong and
    /// the fix. nil for any other error, TLS ones included.
    static func untrustedCertificate(_ error: any Error, host: String) -> String? {
        let fix = "retrying will not change it"
        if let extra = error as? NIOSSLExtraError {
            if extra == .failedToValidateHostname || extra == .serverHostnameImpossibleToMatch {
                return "the server's TLS certificate is not for the host \(host) (\(extra)); \(fix): give the server a certificate that "
                    + "names \(host), or use a URL with a host name its certificate has"
            }
            return nil
        }
        guard let failure = error as? NIOSSLError else { return nil }
        switch failure {
        case .handshakeFailed(.sslError(let stack)) where stack.contains(where: { $0.description.contains("CERTIFICATE_VERIFY_FAILED") }):
            return "the TLS certificate of the server \(host) cannot be verified: it is self-signed, issued by an authority this "
                + "device does not trust, expired or not yet valid (CERTIFICATE_VERIFY_FAILED); \(fix): give the server a "
                + "certificate for \(host) from a trusted authority, or add the authority that issued it to the device's trust "
                + "store (/etc/ssl/certs, update-ca-certificates)"
        case .noCertificateToValidate:
            return "the server \(host) sent no TLS certificate to verify; \(fix): configure the server with a certificate for \(host)"
        case .unableToValidateCertificate:
            return "the TLS certificate of the server \(host) cannot be validated; \(fix): give the server a certificate for \(host) "
                + "from a trusted authority"
        default:
            return nil
        }
    }
}
