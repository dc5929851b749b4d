/// Writes one JSON object whose members are strings, integers, numbers and booleans (``NotificationRequestJSON``).
struct FlatJSONWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var empty = true

    init() { bytes.reserveCapacity(256) }

    /// A string member; with `omitEmpty`, nothing for an empty string.
    mutating func string(_ key: StaticString, _ value: String, omitEmpty: Bool = false) {
        if omitEmpty, value.isEmpty { return }
        member(key)
        appendString(value)
    }

    /// An integer member.
    mutating func integer(_ key: StaticString, _ value: Int64) {
        member(key)
        bytes += String(value).utf8
    }

    /// A number member: an integer when it is one, else the shortest text that reads back as the same `Double`.
    /// Not finite, it is written as null (the core never stores such a number).
    mutating func number(_ key: StaticString, _ value: Double) {
        member(key)
        if !value.isFinite {
            bytes += "null".utf8
        } else if value == value.rounded(), abs(value) < 9e15 {
            bytes += String(Int64(value)).utf8
        } else {
            bytes += value.description.utf8
        }
    }

    /// A boolean member.
    mutating func bool(_ key: StaticString, _ value: Bool) {
        member(key)
        bytes += (value ? "true" : "false").utf8
    }

    /// The object's text.
    mutating func finish() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func member(_ key: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes += $0 }
        bytes += "\":".utf8
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += "\\\"".utf8
            case UInt8(ascii: "\\"): bytes += "\\\\".utf8
            case UInt8(ascii: "\n"): bytes += "\\n".utf8
            case UInt8(ascii: "\r"): bytes += "\\r".utf8
            case UInt8(ascii: "\t"): bytes += "\\t".utf8
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += "\\u00".utf8
                bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// Reads one JSON object whose members are strings, numbers, booleans and nulls: the whole JSON grammar for those, and
/// nothing nested (a nested object or array is an error).
enum FlatJSONReader {
    /// A member's value.
    enum Value: Hashable, Sendable {
        case string(String)
        /// A number written without a fraction or exponent that fits in 64 bits.
        case integer(Int64)
        case number(Double)
        case bool(Bool)
        case null
    }

    typealias Unreadable = NotificationRequestJSON.Unreadable

    /// Reads the object in `bytes`, handing each member to `visit` in order (a repeated key is handed twice).
    static func read(
        _ bytes: UnsafeRawBufferPointer, _ visit: (_ key: String, _ value: Value) throws(Unreadable) -> Void
    ) throws(Unreadable) {
        var reader = Cursor(bytes: bytes)
        reader.skipWhitespace()
        try reader.expect(UInt8(ascii: "{"))
        reader.skipWhitespace()
        if reader.peek == UInt8(ascii: "}") {
            reader.index += 1
        } else {
            while true {
                reader.skipWhitespace()
                let key = try reader.string()
                reader.skipWhitespace()
                try reader.expect(UInt8(ascii: ":"))
                reader.skipWhitespace()
                try visit(key, try reader.value())
                reader.skipWhitespace()
                if reader.peek == UInt8(ascii: ",") {
                    reader.index += 1
                    continue
                }
                try reader.expect(UInt8(ascii: "}"))
                break
            }
        }
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw Unreadable(reason: "text after the object") }
    }

    private struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(Unreadable) {
            guard peek == byte else { throw Unreadable(reason: "expected '\(Character(Unicode.Scalar(byte)))' at byte \(index)") }
            index += 1
        }

        mutating func value() throws(Unreadable) -> Value {
            guard let byte = peek else { throw Unreadable(reason: "a missing value at the end") }
            switch byte {
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw Unreadable(reason: "a nested or malformed value at byte \(index)")
            }
        }

        mutating func literal(_ word: StaticString) throws(Unreadable) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count,
                word.withUTF8Buffer({ $0.elementsEqual(bytes[index..<(index + count)]) })
            else { throw Unreadable(reason: "malformed literal at byte \(index)") }
            index += count
        }

        mutating func number() throws(Unreadable) -> Value {
            let start = index
            var integral = true
            if peek == UInt8(ascii: "-") { index += 1 }
            scan: while let byte = peek {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    index += 1
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-"):
                    integral = false
                    index += 1
                default:
                    break scan
                }
            }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if integral, let value = Int64(text) { return .integer(value) }
            guard let value = Double(text), value.isFinite else { throw Unreadable(reason: "malformed number \(text)") }
            return .number(value)
        }

        /// A string: its text up to the closing quote, its escapes replaced.
        mutating func string() throws(Unreadable) -> String {
            try expect(UInt8(ascii: "\""))
            let start = index
            // Most strings have no escape: they are the bytes between the quotes as they are.
            while let byte = peek, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { throw Unreadable(reason: "a control character in a string at byte \(index)") }
                index += 1
            }
            if peek == UInt8(ascii: "\"") {
                index += 1
                return try text(UnsafeRawBufferPointer(rebasing: bytes[start..<(index - 1)]))
            }
            // With escapes (the user info, JSON itself, is all quotes): the runs between them copied whole.
            var text: [UInt8] = []
            text.reserveCapacity(2 * (index - start) + 16)
            var run = start
            while true {
                while let byte = peek, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    guard byte >= 0x20 else { throw Unreadable(reason: "a control character in a string at byte \(index)") }
                    index += 1
                }
                text.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[run..<index]))
                guard let byte = peek else { throw Unreadable(reason: "an unterminated string") }
                index += 1
                if byte == UInt8(ascii: "\"") { break }
                defer { run = index }
                guard let escape = peek else { throw Unreadable(reason: "an unterminated escape") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"): text += try unicodeEscape()
                default: throw Unreadable(reason: "an unknown escape at byte \(index)")
                }
            }
            guard let string = text.withUnsafeBytes(Self.utf8) else { throw Unreadable(reason: "a string that is not UTF-8") }
            return string
        }

        /// The string of UTF-8 `bytes`, or an error when they are not UTF-8.
        private func text(_ bytes: UnsafeRawBufferPointer) throws(Unreadable) -> String {
            guard let string = Self.utf8(bytes) else { throw Unreadable(reason: "a string that is not UTF-8") }
            return string
        }

        /// The string of UTF-8 `bytes`, nil when they are not UTF-8.
        private static func utf8(_ bytes: UnsafeRawBufferPointer) -> String? {
            // ASCII, the usual case, needs no validating.
            if !bytes.contains(where: { $0 >= 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
            return String(validating: bytes, as: UTF8.self)
        }

        /// The UTF-8 of a `\uXXXX` escape (the `\u` read), with the low half of a surrogate pair when one follows.
        mutating func unicodeEscape() throws(Unreadable) -> [UInt8] {
            var value = try hex4()
            if (0xD800..<0xDC00).contains(value) {
                guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw Unreadable(reason: "a lone surrogate at byte \(index)")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw Unreadable(reason: "a lone surrogate at byte \(index)") }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(value) else { throw Unreadable(reason: "a lone surrogate at byte \(index)") }
            return Array(String(Character(scalar)).utf8)
        }

        mutating func hex4() throws(Unreadable) -> UInt32 {
            guard index + 4 <= bytes.count else { throw Unreadable(reason: "a short \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Unreadable(reason: "a malformed \\u escape at byte \(index)")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
    }
}
