/// The push gateway (SPEC NT-3, decisions 0032 and 0034): an HTTP/2 provider API compatible with APNs, and a Web Push
/// front door (RFC 8030, RFC 8291, RFC 8292).
///
/// - ``APNsRequestRules``: the provider API's rules as a pure function of a request (path, `apns-*` headers,
///   payload), answering a ``ValidatedPush`` or an ``APNsRefusal`` with one of Apple's ``APNsReason``s.
/// - ``ProviderTokenVerifier``: ES256 provider tokens checked with jwt-kit against the keys of the backend, cached.
/// - ``PushGatewayBackend``: the storage port the hosts implement (SQLite in the daemon, PostgreSQL in
///   `offstage-push`); a push is answered 200 only once ``PushGatewayBackend/accept(_:)`` stored it.
/// - ``APNsGateway``: the rules, the token, the topics, the device token, the per-token rate limit and the accept.
/// - ``WebPushGateway`` over a ``WebPushBackend``: the RFC 8030 rules (``WebPushRequestRules``), VAPID
///   (``VAPIDVerifier``), decryption where the subscription's keys are held (``WebPushDecryptor``), stored as an
///   ``AcceptedPush`` whose payload is a ``WebPushMessage``.
/// - ``PushGatewayServer`` with a ``PushRouter`` of ``PushRoute``s (``APNsRoute`` at `/3/`, ``WebPushRoute`` at
///   `/push/`, ``WebPushMessageRoute`` at `/m/`): HTTP/2 and HTTP/1.1, cleartext or TLS with ALPN.
/// - ``APNsProviderClient``, ``ProviderTokenSigner`` and ``ProviderKeyPair``: what an app server (the CLI, the
///   benchmarks) uses to send; ``WebPushEncryptor`` and ``VAPIDSigner`` for Web Push.
public enum OffstagePush {}
