/// The push gateway (SPEC NT-3): an HTTP/2 provider API compatible with APNs and a Web Push front door.
public enum OffstagePush {}
