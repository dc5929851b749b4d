/// Validates JSON text and finds the members of its top-level object without building any value.
///
/// Varlink envelopes are read with this instead of Foundation's `JSONDecoder`: it finds `method`, the flags and the
/// byte range of `parameters` in one pass at memory speed, and the parameters are then decoded once, from their own
/// range, into the type the method expects. Decoding the whole envelope with `JSONDecoder` first would parse every
/// message twice. The scanner checks the complete JSON grammar (RFC 8259: strings and their escapes, numbers,
/// literals, nesting), so malformed text is still caught here, whether or not anyone decodes the parameters later.
/// It does not check that strings are valid UTF-8; the decoders that read them do.
struct JSONEnvelopeScanner {
    /// The kind of a member's value.
    enum Kind: Equatable {
        case object, array, number, null
        case string(hasEscapes: Bool)
        case bool(Bool)
    }

    /// One member of the top-level object: byte ranges are offsets into the scanned text. `key` excludes the quotes.
    struct Member {
        var key: Range<Int>
        var keyHasEscapes: Bool
        var value: Range<Int>
        var kind: Kind
    }

    /// Why text is not a JSON object.
    struct Failure: Error {
        /// Byte offset of the problem.
        var offset: Int
        var reason: String
        /// The text is valid JSON, just not an object.
        var isNotAnObject = false
    }

    /// Nesting deeper than this is rejected, as Foundation's decoder does, so no input can exhaust the stack.
    static let maximumDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Checks that `bytes` is exactly one JSON object (with optional surrounding whitespace) and calls `visit` for
    /// each of its members in order.
    static func scanObject(_ bytes: UnsafeRawBufferPointer, _ visit: (Member) throws(Failure) -> Void) throws(Failure) {
        var scanner = JSONEnvelopeScanner(bytes)
        scanner.skipWhitespace()
        guard scanner.position < bytes.count else { throw Failure(offset: 0, reason: "the message is empty") }
        guard bytes[scanner.position] == UInt8(ascii: "{") else {
            // Say "not an object" only for text that is valid JSON of another kind.
            _ = try scanner.scanValue(depth: 0)
            scanner.skipWhitespace()
            guard scanner.position == bytes.count else { throw scanner.failure("text after the JSON value") }
            throw Failure(offset: 0, reason: "a Varlink message must be a JSON object", isNotAnObject: true)
        }
        try scanner.scanObject(depth: 1, visit)
        scanner.skipWhitespace()
        guard scanner.position == bytes.count else { throw scanner.failure("text after the JSON object") }
    }

    // MARK: Grammar

    private mutating func scanObject(depth: Int, _ visit: (Member) throws(Failure) -> Void) throws(Failure) {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        position += 1  // {
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else { throw failure("expected a string as object key") }
            let keyStart = position + 1
            let keyHasEscapes = try scanString()
            let key = keyStart..<(position - 1)
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw failure("expected ':' after an object key") }
            position += 1
            skipWhitespace()
            let valueStart = position
            let kind = try scanValue(depth: depth)
            try visit(Member(key: key, keyHasEscapes: keyHasEscapes, value: valueStart..<position, kind: kind))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return
            case nil: throw failure("the object is not closed")
            default: throw failure("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func scanArray(depth: Int) throws(Failure) {
        guard depth <= Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth) levels") }
        position += 1  // [
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            _ = try scanValue(depth: depth)
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return
            case nil: throw failure("the array is not closed")
            default: throw failure("expected ',' or ']' in an array")
            }
        }
    }

    private mutating func scanValue(depth: Int) throws(Failure) -> Kind {
        guard let byte = peek else { throw failure("expected a value, found the end of the message") }
        switch byte {
        case UInt8(ascii: "{"):
            try scanObject(depth: depth + 1) { (_: Member) throws(Failure) in }
            return .object
        case UInt8(ascii: "["):
            try scanArray(depth: depth + 1)
            return .array
        case UInt8(ascii: "\""):
            return .string(hasEscapes: try scanString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try scanNumber()
            return .number
        case UInt8(ascii: "t"):
            try scanLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try scanLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try scanLiteral("null")
            return .null
        default:
            throw failure("unexpected character '\(UnicodeScalar(byte))'")
        }
    }

    /// Scans a string starting at its opening quote; returns whether it contains escapes.
    private mutating func scanString() throws(Failure) -> Bool {
        position += 1  // "
        var hasEscapes = false
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return hasEscapes
            }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                position += 1
                guard let escaped = peek else { break }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    position += 1
                case UInt8(ascii: "u"):
                    guard position + 4 < bytes.count,
                        (1...4).allSatisfy({ isHexDigit(bytes[position + $0]) })
                    else { throw failure("'\\u' must be followed by four hexadecimal digits") }
                    position += 5
                default:
                    throw failure("invalid escape '\\\(UnicodeScalar(escaped))' in a string")
                }
                continue
            }
            guard byte >= 0x20 else { throw failure("unescaped control character in a string") }
            position += 1
        }
        throw failure("a string is not closed")
    }

    private mutating func scanNumber() throws(Failure) {
        if peek == UInt8(ascii: "-") { position += 1 }
        guard let first = peek, isDigit(first) else { throw failure("a number needs digits") }
        if first == UInt8(ascii: "0") { position += 1 } else { skipDigits() }
        if peek == UInt8(ascii: ".") {
            position += 1
            guard let digit = peek, isDigit(digit) else { throw failure("a decimal point needs digits after it") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            position += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
            guard let digit = peek, isDigit(digit) else { throw failure("an exponent needs digits") }
            skipDigits()
        }
    }

    private mutating func scanLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw failure("expected '\(literal)'") }
        for index in 0..<count where bytes[position + index] != literal.utf8Start[index] {
            throw failure("expected '\(literal)'")
        }
        position += count
    }

    // MARK: Bytes

    private var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func skipDigits() {
        while let byte = peek, isDigit(byte) { position += 1 }
    }

    private func failure(_ reason: String) -> Failure {
        Failure(offset: position, reason: reason)
    }
}

private func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
}

private func isHexDigit(_ byte: UInt8) -> Bool {
    isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
        || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
}
