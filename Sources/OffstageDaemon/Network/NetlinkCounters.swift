import Glibc

/// Reads named nftables counters straight from the kernel over netlink (`NFT_MSG_GETOBJ`), for the usage figures
/// (SPEC SET-3).
///
/// libnftables answers a `list counter` by first fetching the whole ruleset into its cache and then printing JSON:
/// about 0.8 ms of CPU for one app's two counters here, 2.1 ms for twenty, which the usage readings paid at every
/// change of an app's context, beside the lifecycle transition that caused it. Asking the kernel for the objects
/// themselves costs a request and a reply: a few named ones by name, every counter of the table in one dump beyond.
/// Nothing here changes the ruleset: the filter still writes it through libnftables.
struct NetlinkCounters: Sendable {
    /// A request the kernel refused, or a reply that could not be read.
    struct Failure: Error, CustomStringConvertible, Sendable {
        let description: String
    }

    /// What one app's sockets moved.
    struct Bytes: Hashable, Sendable {
        var received: Int64
        var sent: Int64
    }

    /// The table whose counters are read.
    let table: String

    /// The bytes of the counters named (all the table's when there are more than `byName` of them), by name. A
    /// counter that does not exist is left out.
    func read(_ names: [String], byName: Int = 16) throws(Failure) -> [String: Int64] {
        let requests: [[UInt8]] =
            names.count <= byName
            ? names.enumerated().map { Self.request(table: table, name: $0.element, sequence: UInt32($0.offset + 1)) }
            : [Self.request(table: table, name: nil, sequence: 1)]
        guard !requests.isEmpty else { return [:] }
        let socket = try Socket()
        defer { socket.close() }
        try socket.send(requests.flatMap { $0 })
        var reply = Reply(expected: names.count <= byName ? requests.count : nil)
        while !reply.complete {
            try reply.add(try socket.receive())
        }
        return reply.bytes
    }

    // MARK: Messages (pure, for tests)

    static let messageType = UInt16(subsystemNFTables << 8 | messageGetObject)
    static let replyType = UInt16(subsystemNFTables << 8 | messageNewObject)
    private static let subsystemNFTables = 10
    private static let messageNewObject = 18
    private static let messageGetObject = 19
    private static let nlmsgError: UInt16 = 2
    private static let nlmsgDone: UInt16 = 3
    private static let flagRequest: UInt16 = 0x1
    private static let flagDump: UInt16 = 0x300
    private static let familyInet: UInt8 = 1
    private static let attributeTable: UInt16 = 1
    private static let attributeName: UInt16 = 2
    private static let attributeType: UInt16 = 3
    private static let attributeData: UInt16 = 4
    private static let counterBytes: UInt16 = 1
    private static let objectCounter: UInt32 = 1

    /// A request for one named counter of `table`, or (name nil) a dump of every counter in it.
    static func request(table: String, name: String?, sequence: UInt32) -> [UInt8] {
        var body: [UInt8] = [familyInet, 0, 0, 0]  // nfgenmsg: family, version 0, resource id 0 (big-endian)
        body += attribute(attributeTable, Array(table.utf8) + [0])
        if let name { body += attribute(attributeName, Array(name.utf8) + [0]) }
        body += attribute(attributeType, bigEndian(objectCounter))
        let flags = name == nil ? flagRequest | flagDump : flagRequest
        var message = little(UInt32(16 + body.count)) + little(messageType) + little(flags) + little(sequence) + little(UInt32(0))
        message += body
        return message
    }

    /// What the replies to the requests said so far.
    struct Reply: Sendable {
        /// Replies expected (one per request by name); nil for a dump, which ends with `NLMSG_DONE`.
        let expected: Int?
        private(set) var bytes: [String: Int64] = [:]
        private var answered = 0
        private var done = false

        init(expected: Int?) { self.expected = expected }

        /// Every request has its answer.
        var complete: Bool { expected.map { answered >= $0 } ?? done }

        /// Adds one datagram of replies.
        mutating func add(_ datagram: [UInt8]) throws(Failure) {
            var offset = 0
            while offset + 16 <= datagram.count {
                let length = Int(NetlinkCounters.u32(datagram, offset))
                guard length >= 16, offset + length <= datagram.count else {
                    throw Failure(description: "a netlink message of \(length) bytes at \(offset) of a \(datagram.count)-byte reply")
                }
                let type = NetlinkCounters.u16(datagram, offset + 4)
                let payload = Array(datagram[(offset + 16)..<(offset + length)])
                switch type {
                case NetlinkCounters.nlmsgDone:
                    done = true
                case NetlinkCounters.nlmsgError:
                    let code = payload.count >= 4 ? Int32(bitPattern: NetlinkCounters.u32(payload, 0)) : -EPROTO
                    // A counter asked for by name that does not exist is left out; anything else is a failure.
                    if code != 0, code != -ENOENT || expected == nil {
                        throw Failure(description: "the kernel refused reading the counters: \(String(cString: strerror(-code)))")
                    }
                    if expected == nil { done = true } else { answered += 1 }
                case NetlinkCounters.replyType:
                    if let (name, value) = NetlinkCounters.counter(payload) { bytes[name] = value }
                    if expected != nil { answered += 1 }
                default:
                    break
                }
                offset += (length + 3) & ~3
            }
        }
    }

    /// The name and bytes of one `NFT_MSG_NEWOBJ` payload (after the netlink header); nil when it is not a counter
    /// with both.
    static func counter(_ payload: [UInt8]) -> (String, Int64)? {
        guard payload.count >= 4 else { return nil }
        var name: String?
        var bytes: Int64?
        for (type, value) in attributes(payload, from: 4) {
            switch type {
            case attributeName:
                name = String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
            case attributeData:
                for (inner, data) in attributes(Array(value), from: 0) where inner == counterBytes && data.count == 8 {
                    bytes = Int64(clamping: data.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                }
            default:
                break
            }
        }
        guard let name, let bytes else { return nil }
        return (name, bytes)
    }

    /// The attributes of `buffer` from `start`: type (flags masked off) and value; stops at the first malformed one.
    static func attributes(_ buffer: [UInt8], from start: Int) -> [(UInt16, ArraySlice<UInt8>)] {
        var result: [(UInt16, ArraySlice<UInt8>)] = []
        var offset = start
        while offset + 4 <= buffer.count {
            let length = Int(u16(buffer, offset))
            guard length >= 4, offset + length <= buffer.count else { break }
            result.append((u16(buffer, offset + 2) & 0x3fff, buffer[(offset + 4)..<(offset + length)]))
            offset += (length + 3) & ~3
        }
        return result
    }

    private static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        var bytes = little(UInt16(4 + value.count)) + little(type) + value
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    private static func little<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    fileprivate static func u16(_ buffer: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(buffer[offset]) | UInt16(buffer[offset + 1]) << 8
    }

    fileprivate static func u32(_ buffer: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(buffer[offset + $1]) << (8 * $1) }
    }

    // MARK: The socket

    /// A netfilter netlink socket, with a receive timeout so a lost reply never stops the reader.
    private struct Socket {
        let descriptor: Int32

        init() throws(Failure) {
            descriptor = Glibc.socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Self.netlinkNetfilter)
            guard descriptor >= 0 else { throw Failure(description: "cannot open a netfilter netlink socket: \(Self.lastError)") }
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        func send(_ bytes: [UInt8]) throws(Failure) {
            var kernel = KernelAddress()
            let sent = bytes.withUnsafeBytes { buffer in
                withUnsafePointer(to: &kernel) { address in
                    address.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(descriptor, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<KernelAddress>.size))
                    }
                }
            }
            guard sent == bytes.count else { throw Failure(description: "cannot send to netfilter netlink: \(Self.lastError)") }
        }

        func receive() throws(Failure) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: "no reply from netfilter netlink: \(Self.lastError)") }
            return Array(buffer.prefix(count))
        }

        func close() { _ = Glibc.close(descriptor) }

        private static var lastError: String { String(cString: strerror(errno)) }

        /// `NETLINK_NETFILTER` (linux/netlink.h; Glibc's module does not carry it).
        private static let netlinkNetfilter: Int32 = 12

        /// `struct sockaddr_nl` with port 0: the kernel.
        private struct KernelAddress {
            var family = sa_family_t(AF_NETLINK)
            var pad: UInt16 = 0
            var port: UInt32 = 0
            var groups: UInt32 = 0
        }
    }
}
