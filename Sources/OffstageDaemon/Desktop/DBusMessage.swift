/// One message of the D-Bus wire protocol: the header fields this client uses and a body of values.
///
/// Marshalled little-endian (`DBusMessage+Marshal.swift`); unmarshalled in either byte order, defensively
/// (`DBusMessage+Unmarshal.swift`): whatever arrives from the bus is checked before it is believed.
struct DBusMessage: Sendable, Hashable {
    /// The header's message type byte.
    enum Kind: UInt8, Sendable, Hashable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    /// The header's flags byte.
    struct Flags: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        /// The caller will not read a reply (fire-and-forget calls).
        static let noReplyExpected = Flags(rawValue: 0x1)
        /// The bus must not start a service to deliver the call.
        static let noAutoStart = Flags(rawValue: 0x2)
    }

    var kind: Kind
    var flags: Flags = []
    /// Set by the connection when the message is sent; never 0 on the wire.
    var serial: UInt32 = 0
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var replySerial: UInt32?
    var destination: String?
    var sender: String?
    var body: [DBusValue] = []

    /// The body's signature, as the header's SIGNATURE field carries it.
    var signature: String { body.map(\.type.signature).joined() }

    /// A method call to `member` of `interface` on the object `path` of `destination`.
    static func methodCall(
        destination: String?, path: String, interface: String?, member: String, body: [DBusValue] = [],
        flags: Flags = []
    ) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, flags: flags, path: path, interface: interface, member: member, destination: destination,
            body: body)
    }

    /// The largest message this client sends or accepts. The specification allows 128 MiB, but notifications and
    /// their replies are a few hundred bytes: a bus that announces more is refused before anything is allocated for it.
    static let maximumLength = 1 << 20
    /// The specification's limit on an array's marshalled length (64 MiB).
    static let maximumArrayLength = 1 << 26
    /// The specification's limit on the nesting of containers, variants included (32 arrays plus 32 structs).
    static let maximumDepth = 64
}

/// One value of the D-Bus type system.
enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An index into the descriptors sent with the message (never negotiated here; kept so such a body parses).
    case unixFD(UInt32)
    /// Every element is of type `element`, which is kept so that an empty array still has its signature.
    case array(element: DBusType, [DBusValue])
    case structure([DBusValue])
    /// Only as an element of an array (`a{…}`).
    indirect case dictEntry(key: DBusValue, value: DBusValue)
    indirect case variant(DBusValue)

    /// The value's type.
    var type: DBusType {
        switch self {
        case .byte: .byte
        case .bool: .bool
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let element, _): .array(element)
        case .structure(let fields): .structure(fields.map(\.type))
        case .dictEntry(let key, let value): .dictEntry(key: key.type, value: value.type)
        case .variant: .variant
        }
    }

    /// The text of a string, object path or signature; nil for other values.
    var text: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    /// An array of strings (`as`).
    static func strings(_ strings: [String]) -> DBusValue {
        .array(element: .string, strings.map { .string($0) })
    }
}

/// One complete type of the D-Bus type system, as a signature spells it.
indirect enum DBusType: Sendable, Hashable {
    case byte, bool, int16, uint16, int32, uint32, int64, uint64, double, string, objectPath, signature, unixFD
    case variant
    case array(DBusType)
    case structure([DBusType])
    case dictEntry(key: DBusType, value: DBusType)

    /// The type's signature.
    var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.signature
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        }
    }

    /// Where a value of this type starts: a multiple of this, counted from the start of the message.
    var alignment: Int {
        switch self {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .bool, .int32, .uint32, .string, .objectPath, .unixFD, .array: 4
        case .int64, .uint64, .double, .structure, .dictEntry: 8
        }
    }

    /// Whether it may be a dictionary key (a basic type, not a container or a variant).
    var isBasic: Bool {
        switch self {
        case .variant, .array, .structure, .dictEntry: false
        default: true
        }
    }

    /// The complete types of `signature`, in order.
    ///
    /// - Throws: `.malformedMessage` for an unknown type code, an unclosed or empty struct, a dict entry outside an
    ///   array or with a container key, nesting deeper than the specification allows, or more than 255 bytes.
    static func parse(_ signature: String) throws(DesktopNotificationsError) -> [DBusType] {
        let codes = Array(signature.utf8)
        guard codes.count <= 255 else {
            throw .malformedMessage("signature of \(codes.count) bytes (the limit is 255)")
        }
        var parser = SignatureParser(codes: codes, text: signature)
        var types: [DBusType] = []
        while parser.position < codes.count {
            types.append(try parser.next(arrays: 0, structs: 0, inArray: false))
        }
        return types
    }
}

/// Reads one complete type after another from a signature, with the specification's nesting limits.
private struct SignatureParser {
    let codes: [UInt8]
    let text: String
    var position = 0

    mutating func next(arrays: Int, structs: Int, inArray: Bool) throws(DesktopNotificationsError) -> DBusType {
        guard arrays <= 32, structs <= 32 else { throw fail("nests containers deeper than 32") }
        guard position < codes.count else { throw fail("ends inside a container") }
        let code = codes[position]
        position += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .bool
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            return .array(try next(arrays: arrays + 1, structs: structs, inArray: true))
        case UInt8(ascii: "("):
            var fields: [DBusType] = []
            while position < codes.count, codes[position] != UInt8(ascii: ")") {
                fields.append(try next(arrays: arrays, structs: structs + 1, inArray: false))
            }
            guard position < codes.count else { throw fail("has an unclosed struct") }
            position += 1
            guard !fields.isEmpty else { throw fail("has an empty struct") }
            return .structure(fields)
        case UInt8(ascii: "{"):
            guard inArray else { throw fail("has a dict entry outside an array") }
            let key = try next(arrays: arrays, structs: structs + 1, inArray: false)
            guard key.isBasic else { throw fail("has a dict entry whose key is not a basic type") }
            let value = try next(arrays: arrays, structs: structs + 1, inArray: false)
            guard position < codes.count, codes[position] == UInt8(ascii: "}") else {
                throw fail("has a dict entry that is not one key and one value")
            }
            position += 1
            return .dictEntry(key: key, value: value)
        default:
            throw fail("has the unknown type code \(Self.show(code))")
        }
    }

    private func fail(_ what: String) -> DesktopNotificationsError {
        .malformedMessage("signature \"\(text)\" \(what)")
    }

    private static func show(_ code: UInt8) -> String {
        (0x21..<0x7f).contains(code) ? "'\(Character(Unicode.Scalar(code)))'" : "0x\(String(code, radix: 16))"
    }
}
