/// The bare baseline's wire: a NUL-terminated request of a chosen size whose first bytes say, in decimal, how long
/// the NUL-terminated reply must be. The echo server does nothing else, so a round trip through it is the cost of
/// the transport alone for messages of the sizes the SDK sends and receives.
public enum EchoWire {
    /// A request of exactly `requestSize` bytes (NUL included) asking for a reply of `replySize` bytes.
    public static func request(size requestSize: Int, replySize: Int) -> [UInt8] {
        var bytes = Array(String(replySize).utf8)
        precondition(requestSize > bytes.count + 1, "the request must hold the reply size and the NUL")
        bytes.append(UInt8(ascii: " "))
        while bytes.count < requestSize - 1 { bytes.append(UInt8(ascii: "x")) }
        bytes.append(0)
        return bytes
    }

    /// The reply size a request asks for (its leading decimal digits).
    public static func replySize(of request: UnsafeRawBufferPointer) -> Int {
        var size = 0
        for byte in request {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            size = size * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return size
    }

    /// A reply of exactly `size` bytes, NUL included.
    public static func reply(size: Int) -> [UInt8] {
        Array(repeating: UInt8(ascii: "y"), count: max(size - 1, 0)) + [0]
    }
}
