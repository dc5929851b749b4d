/// The push gateway (SPEC NT-3, decision 0032): an HTTP/2 provider API compatible with APNs, and later a Web Push
/// front door.
///
/// - ``APNsRequestRules``: the provider API's rules as a pure function of a request (path, `apns-*` headers,
///   payload), answering a ``ValidatedPush`` or an ``APNsRefusal`` with one of Apple's ``APNsReason``s.
/// - ``ProviderTokenVerifier``: ES256 provider tokens checked with jwt-kit against the keys of the backend, cached.
/// - ``PushGatewayBackend``: the storage port the hosts implement (SQLite in the daemon, PostgreSQL in
///   `offstage-push`); a push is answered 200 only once ``PushGatewayBackend/accept(_:)`` stored it.
/// - ``APNsGateway``: the rules, the token, the topics, the device token, the per-token rate limit and the accept.
/// - ``PushGatewayServer`` with a ``PushRouter`` of ``PushRoute``s (``APNsRoute`` at `/3/`): h2c or TLS with ALPN h2.
/// - ``APNsProviderClient``, ``ProviderTokenSigner`` and ``ProviderKeyPair``: what an app server (the CLI, the
///   benchmarks) uses to send.
public enum OffstagePush {}
