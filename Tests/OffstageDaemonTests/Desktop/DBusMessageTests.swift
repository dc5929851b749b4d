import Testing

@testable import OffstageDaemon

/// The D-Bus wire format the desktop notifications client speaks (SPEC NT-2): round trips, the alignment rules, bytes
/// made by another implementation, and malformed input, which must throw a clear error and never crash.
@Suite("Desktop: D-Bus message marshalling (NT-2)")
struct DBusMessageTests {
    /// `Hello` as another D-Bus implementation (Python's dbus-fast) marshals it with serial 1.
    static let helloFromDbusFast = hex(
        "6c01000100000000010000006d00000001016f00150000002f6f72672f667265656465736b746f702f4442757300000002017300"
            + "140000006f72672e667265656465736b746f702e4442757300000000030173000500000048656c6c6f0000000601730014000000"
            + "6f72672e667265656465736b746f702e4442757300000000")
    /// The signal `ActionInvoked(7, "default")` as dbus-fast marshals it with serial 5.
    static let actionInvokedFromDbusFast = hex(
        "6c04000110000000050000007000000001016f001e0000002f6f72672f667265656465736b746f702f4e6f74696669636174696f"
            + "6e730000020173001d0000006f72672e667265656465736b746f702e4e6f74696669636174696f6e73000000030173000d000000"
            + "416374696f6e496e766f6b65640000000801670002757300070000000700000064656661756c7400")

    static let notifications = "org.freedesktop.Notifications"
    static let notificationsPath = "/org/freedesktop/Notifications"

    @Test("NT-2: Hello is marshalled byte for byte as another implementation does it, and read back")
    func helloMatchesAnotherImplementation() throws {
        let hello = DBusMessage.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "Hello")
        #expect(try hello.marshal(serial: 1) == Self.helloFromDbusFast)
        var expected = hello
        expected.serial = 1
        #expect(try DBusMessage.unmarshal(Self.helloFromDbusFast) == expected)
    }

    @Test("NT-2: a signal marshalled by another implementation is read with its header fields and body")
    func signalFromAnotherImplementation() throws {
        let message = try DBusMessage.unmarshal(Self.actionInvokedFromDbusFast)
        #expect(message.kind == .signal)
        #expect(message.serial == 5)
        #expect(message.path == Self.notificationsPath)
        #expect(message.interface == Self.notifications)
        #expect(message.member == "ActionInvoked")
        #expect(message.body == [.uint32(7), .string("default")])
        #expect(DesktopNotifications.event(from: message) == .actionInvoked(id: 7, action: "default"))
        #expect(try message.marshal(serial: 5) == Self.actionInvokedFromDbusFast)
    }

    @Test("NT-2: Notify with non-ASCII text, actions and a{sv} hints matches another implementation's bytes")
    func notifyMatchesAnotherImplementation() throws {
        let fromDbusFast = Self.hex(
            "6c01000170000000030000009b00000001016f001e0000002f6f72672f667265656465736b746f702f4e6f74696669636174"
                + "696f6e730000020173001d0000006f72672e667265656465736b746f702e4e6f74696669636174696f6e73000000030173"
                + "00060000004e6f746966790000060173001d0000006f72672e667265656465736b746f702e4e6f74696669636174696f6e"
                + "73000000080167000d73757373736173617b73767d690000000000000300000061707000000000000000000000000000"
                + "070000004772c3bcc39f65000100000062000000150000000700000064656661756c7400040000004f70656e0000000024"
                + "00000007000000757267656e63790001790002080000007265736964656e740001620001000000ffffffff")
        let hints = DBusValue.array(
            element: .dictEntry(key: .string, value: .variant),
            [
                .dictEntry(key: .string("urgency"), value: .variant(.byte(2))),
                .dictEntry(key: .string("resident"), value: .variant(.bool(true))),
            ])
        let notify = DBusMessage.methodCall(
            destination: Self.notifications, path: Self.notificationsPath, interface: Self.notifications,
            member: "Notify",
            body: [
                .string("app"), .uint32(0), .string(""), .string("Grüße"), .string("b"), .strings(["default", "Open"]),
                hints, .int32(-1),
            ])
        #expect(notify.signature == "susssasa{sv}i")
        #expect(try notify.marshal(serial: 3) == fromDbusFast)
        #expect(try DBusMessage.unmarshal(fromDbusFast).body == notify.body)
    }

    @Test("NT-2: every type survives a round trip, in a message of each kind")
    func roundTripOfEveryType() throws {
        let body: [DBusValue] = [
            .byte(0xfe), .bool(true), .int16(-2), .uint16(65_000), .int32(.min), .uint32(.max), .int64(.min),
            .uint64(.max), .double(-1.5), .string("héllo ✓"), .objectPath("/a/b_1"), .signature("a{sv}(yi)"),
            .unixFD(0), .structure([.byte(1), .string("x"), .variant(.structure([.int64(3), .bool(false)]))]),
            .array(
                element: .array(.byte),
                [.array(element: .byte, [1, 2, 3].map { .byte($0) }), .array(element: .byte, [])]),
            .variant(.variant(.array(element: .string, [.string("deep")]))),
        ]
        var message = DBusMessage(
            kind: .error, flags: [.noAutoStart], errorName: "org.example.Error.Odd", replySerial: 41,
            destination: ":1.7", sender: ":1.8", body: body)
        for kind in [DBusMessage.Kind.error, .methodReturn] {
            message.kind = kind
            let decoded = try DBusMessage.unmarshal(try message.marshal(serial: 9))
            var expected = message
            expected.serial = 9
            #expect(decoded == expected)
        }
    }

    @Test("NT-2: a struct after a byte starts on the next 8-byte boundary, padded with zeros")
    func structAfterByte() throws {
        var writer = DBusWriter()
        try writer.write(.byte(1), depth: 0)
        try writer.write(.structure([.int32(2)]), depth: 0)
        #expect(writer.bytes == [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0])
    }

    @Test("NT-2: an array of dict entries of variants: entries 8-aligned, the padding before them not counted")
    func dictionaryOfVariants() throws {
        var writer = DBusWriter()
        let entry = DBusValue.dictEntry(key: .string("a"), value: .variant(.uint32(5)))
        try writer.write(.array(element: .dictEntry(key: .string, value: .variant), [entry]), depth: 0)
        // Length 16 (from byte 8 to 24), 4 bytes of padding, "a", signature "u", padding, 5.
        #expect(writer.bytes == [16, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x61, 0, 1, 0x75, 0, 0, 0, 0, 5, 0, 0, 0])
    }

    @Test("NT-2: an empty array still has the padding to its element's alignment; an empty aax has none")
    func emptyArrays() throws {
        var writer = DBusWriter()
        try writer.write(.array(element: .structure([.int32]), []), depth: 0)
        try writer.write(.byte(3), depth: 0)
        #expect(writer.bytes == [0, 0, 0, 0, 0, 0, 0, 0, 3])
        var nested = DBusWriter()
        try nested.write(.array(element: .array(.int64), []), depth: 0)
        #expect(nested.bytes == [0, 0, 0, 0])
        // And both read back from a message body.
        let message = DBusMessage(
            kind: .methodReturn, replySerial: 1,
            body: [.array(element: .structure([.int32]), []), .byte(3), .array(element: .array(.int64), [])])
        #expect(try DBusMessage.unmarshal(try message.marshal(serial: 2)).body == message.body)
    }

    @Test("NT-2: values that cannot be sent are refused before anything is written")
    func unsendableValues() {
        let cases: [(DBusValue, String)] = [
            (.string("a\u{0}b"), "NUL"), (.objectPath("/a//b"), "object path"), (.signature("(i"), "signature"),
            (.array(element: .int32, [.string("x")]), "holding a value of type s"), (.structure([]), "empty struct"),
        ]
        for (value, fragment) in cases {
            let message = DBusMessage(kind: .methodReturn, replySerial: 1, body: [value])
            Self.expectError(fragment, unsupported: true) { _ = try message.marshal(serial: 1) }
        }
    }

    // MARK: - Malformed input

    @Test("NT-2: a truncated message, or one longer than its header says, is refused")
    func truncated() throws {
        let bytes = Self.actionInvokedFromDbusFast
        Self.expectMalformed("announces", Array(bytes.dropLast()))
        Self.expectMalformed("announces", bytes + [0])
        Self.expectMalformed("at least 16", Array(bytes.prefix(10)))
        Self.expectMalformed("a header of 0 bytes", [])
    }

    @Test("NT-2: lengths that point past the end of the message are refused")
    func badLengths() throws {
        let message = DBusMessage(kind: .methodReturn, replySerial: 1, body: [.string("hello")])
        let bytes = try message.marshal(serial: 2)
        let body = bytes.count - 10
        Self.expectMalformed("past the end", Self.patch(bytes, at: body, [0xff, 0xff, 0xff, 0x7f]))
        Self.expectMalformed("not ending in NUL", Self.patch(bytes, at: body, [4, 0, 0, 0]))
        // The body length in the header: a message claiming more than the limit is refused from its first 16 bytes.
        Self.expectMalformed("the limit is", Self.patch(bytes, at: 4, [0, 0, 0, 0x10]))
        #expect(throws: DesktopNotificationsError.self) {
            try DBusMessage.frameLength(Self.patch(bytes, at: 4, [0, 0, 0, 0x10])[...])
        }
    }

    @Test("NT-2: an absurd array length is refused, not allocated")
    func absurdArrayLength() throws {
        let message = DBusMessage(
            kind: .methodReturn, replySerial: 1, body: [.array(element: .int32, [.int32(1), .int32(2)])])
        let bytes = try message.marshal(serial: 2)
        let length = bytes.count - 12
        Self.expectMalformed("the limit is 67108864", Self.patch(bytes, at: length, [0xf0, 0xff, 0xff, 0xff]))
        Self.expectMalformed("truncated: an array of 4096 bytes", Self.patch(bytes, at: length, [0, 0x10, 0, 0]))
        Self.expectMalformed("past its length", Self.patch(bytes, at: length, [6, 0, 0, 0]))
    }

    @Test("NT-2: a bad body signature is refused with what is wrong with it")
    func badSignature() throws {
        let message = DBusMessage(kind: .methodReturn, replySerial: 1, body: [.structure([.int32(1), .int32(2)])])
        let bytes = try message.marshal(serial: 2)
        let signature = Array("(ii)".utf8)
        for (replacement, fragment) in [
            ("(iz)", "unknown type code 'z'"), ("((i)", "unclosed struct"), ("{ii}", "dict entry outside an array"),
            ("(ii(", "unclosed struct"), ("a{v}", "not a basic type"),
        ] {
            Self.expectMalformed(fragment, Self.replace(bytes, signature, Array(replacement.utf8)))
        }
        Self.expectMalformed("unread bytes", Self.replace(bytes, signature, Array("(i)y".utf8)))
        #expect(throws: DesktopNotificationsError.self) { try DBusType.parse(String(repeating: "a", count: 33) + "i") }
        #expect(throws: DesktopNotificationsError.self) { try DBusType.parse(String(repeating: "y", count: 256)) }
    }

    @Test("NT-2: bad headers are refused: byte order, version, type, serial 0, wrong field types, missing fields")
    func badHeaders() throws {
        let bytes = Self.actionInvokedFromDbusFast
        Self.expectMalformed("byte order 0x58", Self.patch(bytes, at: 0, [0x58]))
        Self.expectMalformed("protocol version 2", Self.patch(bytes, at: 3, [2]))
        Self.expectMalformed("message type 9", Self.patch(bytes, at: 1, [9]))
        Self.expectMalformed("serial 0", Self.patch(bytes, at: 8, [0, 0, 0, 0]))
        // PATH (field 1) sent as a string instead of an object path.
        Self.expectMalformed("header field 1 of type s", Self.replace(bytes, [1, 1, 0x6f, 0], [1, 1, 0x73, 0]))
        // A method return without its REPLY_SERIAL: the signal re-typed as a return.
        Self.expectMalformed("REPLY_SERIAL", Self.patch(bytes, at: 1, [2]))
    }

    @Test("NT-2: bad values are refused: non-zero padding, a boolean of 2, invalid UTF-8, runaway variant nesting")
    func badValues() throws {
        let padded = try DBusMessage(kind: .methodReturn, replySerial: 1, body: [.byte(1), .uint32(2)]).marshal(
            serial: 2)
        Self.expectMalformed("non-zero padding", Self.patch(padded, at: padded.count - 7, [9]))
        let flag = try DBusMessage(kind: .methodReturn, replySerial: 1, body: [.bool(true)]).marshal(serial: 2)
        Self.expectMalformed("boolean of value 2", Self.patch(flag, at: flag.count - 4, [2]))
        let text = try DBusMessage(kind: .methodReturn, replySerial: 1, body: [.string("ab")]).marshal(serial: 2)
        Self.expectMalformed("not valid UTF-8", Self.patch(text, at: text.count - 3, [0xff]))
        // 100 nested variants: the writer refuses to make them, so they are written by hand.
        var deep: [UInt8] = []
        for _ in 0..<100 { deep += [1, 0x76, 0] }
        deep += [1, 0x79, 0, 7]
        var header = try DBusMessage(kind: .methodReturn, replySerial: 1, body: [.variant(.byte(7))]).marshal(serial: 2)
        header.removeLast(4)
        header = Self.patch(header, at: 4, withUnsafeBytes(of: UInt32(deep.count).littleEndian) { Array($0) })
        Self.expectMalformed("nested deeper than 64", header + deep)
    }

    // MARK: - Helpers

    static func expectMalformed(_ fragment: String, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation)
    {
        expectError(fragment, unsupported: false, sourceLocation: sourceLocation) {
            _ = try DBusMessage.unmarshal(bytes)
        }
    }

    /// Expects `body` to throw `.malformedMessage` (or `.unsupportedValue`) whose text holds `fragment`.
    static func expectError(
        _ fragment: String, unsupported: Bool, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("expected an error about \"\(fragment)\", got none", sourceLocation: sourceLocation)
        } catch let error as DesktopNotificationsError {
            switch error {
            case .malformedMessage(let what) where !unsupported, .unsupportedValue(let what) where unsupported:
                #expect(what.contains(fragment), "\(error)", sourceLocation: sourceLocation)
                #expect(error.description.hasPrefix(unsupported ? "cannot send" : "malformed message from the bus: "))
            default:
                Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    static func patch(_ bytes: [UInt8], at offset: Int, _ replacement: [UInt8]) -> [UInt8] {
        var copy = bytes
        copy.replaceSubrange(offset..<offset + replacement.count, with: replacement)
        return copy
    }

    /// `bytes` with the first occurrence of `old` replaced by `new`, of the same length.
    static func replace(_ bytes: [UInt8], _ old: [UInt8], _ new: [UInt8]) -> [UInt8] {
        let start = (0...(bytes.count - old.count)).first { Array(bytes[$0..<$0 + old.count]) == old }!
        return patch(bytes, at: start, new)
    }

    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }
}
