import Foundation
import OffstageProtocol
import Testing

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

private func text(_ data: Data?) -> String? { data.map { String(decoding: $0, as: UTF8.self) } }

@Suite("VarlinkFraming")
struct VarlinkFramingTests {
    @Test("several messages in one read come out one by one")
    func severalInOneRead() throws {
        var framing = VarlinkFraming()
        framing.append(contentsOf: bytes("{\"a\":1}\0{\"b\":2}\0{\"c\""))
        #expect(text(try framing.nextMessage()) == #"{"a":1}"#)
        #expect(text(try framing.nextMessage()) == #"{"b":2}"#)
        #expect(try framing.nextMessage() == nil)
        #expect(framing.bufferedByteCount == 4)
        framing.append(contentsOf: bytes(":3}\0"))
        #expect(text(try framing.nextMessage()) == #"{"c":3}"#)
        #expect(framing.bufferedByteCount == 0)
    }

    @Test("a message split over many reads, byte by byte, comes out whole")
    func splitOverReads() throws {
        var framing = VarlinkFraming(initialCapacity: 8)
        let message =
            #"{"method":"io.offstage.Test.Echo","parameters":{"text":"\#(String(repeating: "x", count: 300))"}}"#
        for byte in bytes(message) {
            framing.append(contentsOf: [byte])
            #expect(try framing.nextMessage() == nil)
        }
        framing.append(contentsOf: [0])
        #expect(text(try framing.nextMessage()) == message)
    }

    @Test("readIntoFreeSpace fills the buffer in place")
    func readInPlace() throws {
        var framing = VarlinkFraming()
        let source = bytes("one\0two\0")
        let count = framing.readIntoFreeSpace(minimumFreeSpace: 16) { buffer in
            buffer.copyBytes(from: source)
            return source.count
        }
        #expect(count == 8)
        #expect(text(try framing.nextMessage()) == "one")
        let second = try framing.withNextMessage { String(decoding: $0, as: UTF8.self) }
        #expect(second == "two")
    }

    @Test("an empty message is a message")
    func emptyMessage() throws {
        var framing = VarlinkFraming()
        framing.append(contentsOf: [0])
        #expect(try framing.nextMessage() == Data())
    }

    @Test("a complete message over the limit is MessageTooLarge, and stays so")
    func oversizeComplete() throws {
        var framing = VarlinkFraming(maximumMessageSize: 10)
        framing.append(contentsOf: bytes("0123456789\0"))
        #expect(text(try framing.nextMessage()) == "0123456789")
        framing.append(contentsOf: bytes("0123456789A\0"))
        let error = #expect(throws: VarlinkError.self) { try framing.nextMessage() }
        #expect(error == .messageTooLarge(limit: 10))
        #expect(throws: VarlinkError.self) { try framing.nextMessage() }
        framing.reset()
        framing.append(contentsOf: bytes("ok\0"))
        #expect(text(try framing.nextMessage()) == "ok")
    }

    @Test("more than the limit without a NUL is MessageTooLarge before it is complete")
    func oversizeUnterminated() throws {
        var framing = VarlinkFraming(maximumMessageSize: 1000)
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 300)
        for _ in 0..<3 {
            framing.append(contentsOf: chunk)
            #expect(try framing.nextMessage() == nil)
        }
        framing.append(contentsOf: chunk)
        #expect(throws: VarlinkError.messageTooLarge(limit: 1000)) { try framing.nextMessage() }
    }

    @Test("a long partial message after a short one is kept whole as the buffer is compacted and grown")
    func compaction() throws {
        var framing = VarlinkFraming(initialCapacity: 64)
        let long = String(repeating: "y", count: 5000)
        framing.append(contentsOf: bytes("short\0" + long.prefix(40)))
        #expect(text(try framing.nextMessage()) == "short")
        framing.append(contentsOf: bytes(String(long.dropFirst(40)) + "\0tail\0"))
        #expect(text(try framing.nextMessage()) == long)
        #expect(text(try framing.nextMessage()) == "tail")
    }
}
