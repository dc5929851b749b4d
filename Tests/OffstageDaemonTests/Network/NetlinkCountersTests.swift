import Glibc
@testable import OffstageDaemon
import Testing

/// Reading the named counters from the kernel over netlink (SPEC SET-3): the requests as bytes, and replies made by
/// hand, well-formed and not.
@Suite("nftables counters over netlink")
struct NetlinkCountersTests {
    /// A netlink message: header (little-endian on this machine, as the kernel writes it) and payload.
    static func message(type: UInt16, sequence: UInt32 = 1, _ payload: [UInt8]) -> [UInt8] {
        var bytes = le(UInt32(16 + payload.count)) + le(type) + le(UInt16(0)) + le(sequence) + le(UInt32(0)) + payload
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        var bytes = le(UInt16(4 + value.count)) + le(type) + value
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    static func be<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    /// The kernel's `NFT_MSG_NEWOBJ` for a counter: nfgenmsg, table, name, type, and the nested data.
    static func counter(_ name: String, bytes: UInt64) -> [UInt8] {
        let data = attribute(1, be(bytes)) + attribute(2, be(UInt64(7)))
        let payload: [UInt8] = [1, 0, 0, 0] + attribute(1, Array("offstage_t".utf8) + [0]) + attribute(2, Array(name.utf8) + [0])
            + attribute(3, be(UInt32(1))) + attribute(4 | 0x8000, data)
        return message(type: NetlinkCounters.replyType, payload)
    }

    static func error(_ code: Int32, sequence: UInt32 = 1) -> [UInt8] {
        message(type: 2, sequence: sequence, le(UInt32(bitPattern: code)) + [UInt8](repeating: 0, count: 16))
    }

    @Test("SET-3: a request names the table, the counter and the counter type; a dump has no name and the dump flags")
    func requests() {
        let one = NetlinkCounters.request(table: "offstage_t", name: "app1_in", sequence: 3)
        #expect(one.count % 4 == 0 && NetlinkCounters.attributes(one, from: 20).count == 3)
        #expect(Array(one[0..<4]) == Self.le(UInt32(one.count)))
        #expect(Array(one[4..<6]) == Self.le(UInt16(10 << 8 | 19)), "NFNL_SUBSYS_NFTABLES, NFT_MSG_GETOBJ")
        #expect(Array(one[6..<8]) == Self.le(UInt16(1)), "NLM_F_REQUEST")
        #expect(Array(one[8..<12]) == Self.le(UInt32(3)))
        #expect(one[16] == 1, "NFPROTO_INET")
        let attributes = NetlinkCounters.attributes(one, from: 20)
        #expect(attributes.map(\.0) == [1, 2, 3])
        #expect(Array(attributes[0].1) == Array("offstage_t".utf8) + [0])
        #expect(Array(attributes[1].1) == Array("app1_in".utf8) + [0])
        #expect(Array(attributes[2].1) == Self.be(UInt32(1)), "NFT_OBJECT_COUNTER, big-endian")
        let dump = NetlinkCounters.request(table: "offstage_t", name: nil, sequence: 1)
        #expect(Array(dump[6..<8]) == Self.le(UInt16(0x301)), "NLM_F_REQUEST | NLM_F_DUMP")
        #expect(NetlinkCounters.attributes(dump, from: 20).map(\.0) == [1, 3])
    }

    @Test("SET-3: replies by name: each counter's bytes, a missing counter left out, complete once every request is answered")
    func repliesByName() throws {
        var reply = NetlinkCounters.Reply(expected: 3)
        try reply.add(Self.counter("app1_in", bytes: 5_008_117) + Self.counter("app1_out", bytes: 4_049))
        #expect(!reply.complete)
        try reply.add(Self.error(-ENOENT, sequence: 3))
        #expect(reply.complete)
        #expect(reply.bytes == ["app1_in": 5_008_117, "app1_out": 4_049])
    }

    @Test("SET-3: a dump is complete at NLMSG_DONE, over several datagrams; a count too large for Int64 is clamped")
    func dump() throws {
        var reply = NetlinkCounters.Reply(expected: nil)
        try reply.add(Self.counter("app1_in", bytes: 1) + Self.counter("app2_in", bytes: UInt64.max))
        #expect(!reply.complete)
        try reply.add(Self.counter("app2_out", bytes: 0) + Self.message(type: 3, Self.le(UInt32(0))))
        #expect(reply.complete)
        #expect(reply.bytes == ["app1_in": 1, "app2_in": .max, "app2_out": 0])
    }

    @Test("SET-3: a refusal, a message longer than its datagram, and a missing table in a dump are failures that name the cause")
    func failures() {
        var byName = NetlinkCounters.Reply(expected: 1)
        #expect(throws: NetlinkCounters.Failure.self) { try byName.add(Self.error(-EPERM)) }
        var dump = NetlinkCounters.Reply(expected: nil)
        #expect(throws: NetlinkCounters.Failure.self) { try dump.add(Self.error(-ENOENT)) }
        var truncated = NetlinkCounters.Reply(expected: 1)
        let whole = Self.counter("app1_in", bytes: 1)
        do {
            try truncated.add(Array(whole.prefix(whole.count - 8)))
            Issue.record("a truncated message was accepted")
        } catch {
            #expect(error.description.contains("bytes at 0"), "\(error)")
        }
        #expect(truncated.bytes.isEmpty)
    }

    @Test("SET-3: a reply that is not a counter with a name and 8 bytes counts nothing; a malformed attribute ends the list")
    func ignoresTheRest() throws {
        #expect(NetlinkCounters.counter([]) == nil)
        #expect(NetlinkCounters.counter([1, 0, 0, 0] + Self.attribute(2, Array("x".utf8) + [0])) == nil, "no data")
        #expect(NetlinkCounters.counter([1, 0, 0, 0] + Self.attribute(4, Self.attribute(1, [1, 2]))) == nil, "no name, short bytes")
        #expect(NetlinkCounters.attributes([8, 0, 1, 0, 1, 2, 3, 4, 200, 0, 2, 0], from: 0).count == 1)
        var reply = NetlinkCounters.Reply(expected: 1)
        try reply.add(Self.message(type: NetlinkCounters.replyType, [1, 0, 0, 0]))
        #expect(reply.complete && reply.bytes.isEmpty)
    }

    @Test("SET-3: cgroup v2 cpu.stat and smaps_rollup are read for the app's CPU and memory")
    func resourceFiles() {
        #expect(AppResourceReader.usageMicroseconds(cpuStat: "usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n") == 1234)
        #expect(AppResourceReader.usageMicroseconds(cpuStat: "user_usec 1000\n") == nil)
        let rollup = "55c0-7ffe ---p 00000000 00:00 0 [rollup]\nRss:                9000 kB\nPss:                4242 kB\nPss_Anon:            100 kB\n"
        #expect(AppResourceReader.pssBytes(smapsRollup: rollup) == Int64(4_343_808))
        #expect(AppResourceReader.pssBytes(smapsRollup: "Pss_Anon: 1 kB\n") == nil)
    }
}
