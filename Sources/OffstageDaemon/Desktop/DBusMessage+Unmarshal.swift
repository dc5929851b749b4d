extension DBusMessage {
    /// The fixed part of every header: byte order, type, flags, version, body length, serial, fields length.
    static let fixedHeaderLength = 16

    /// The length of the whole message that starts with `prefix` (its first 16 bytes or more), read from its header
    /// before the rest arrives, so that the reader knows how much to wait for.
    ///
    /// - Throws: `.malformedMessage` for an unknown byte order or protocol version, or a length over the limit.
    static func frameLength(_ prefix: ArraySlice<UInt8>) throws(DesktopNotificationsError) -> Int {
        guard prefix.count >= fixedHeaderLength else {
            throw .malformedMessage("a header of \(prefix.count) bytes (at least 16 are needed)")
        }
        var reader = try DBusReader(bytes: Array(prefix.prefix(fixedHeaderLength)))
        guard prefix[prefix.startIndex + 3] == 1 else {
            throw .malformedMessage("protocol version \(prefix[prefix.startIndex + 3]) (only 1 exists)")
        }
        reader.offset = 4
        let bodyLength = Int(try reader.readUInt32())
        reader.offset = 12
        let fieldsLength = Int(try reader.readUInt32())
        guard fieldsLength <= maximumArrayLength, bodyLength <= maximumLength else {
            throw .malformedMessage(
                "a message announcing \(fieldsLength) bytes of header fields and \(bodyLength) "
                    + "bytes of body (the limit is \(maximumLength) bytes in all)")
        }
        let headerLength = (fixedHeaderLength + fieldsLength + 7) & ~7
        let total = headerLength + bodyLength
        guard total <= maximumLength else {
            throw .malformedMessage("a message of \(total) bytes (the limit is \(maximumLength))")
        }
        return total
    }

    /// The message in `bytes`, which must be exactly one whole message.
    ///
    /// - Throws: `.malformedMessage` naming what was wrong: a truncated or oversized message, a bad length, a bad
    ///   signature, non-zero padding, invalid UTF-8, a header field of the wrong type or a required one missing.
    static func unmarshal(_ bytes: [UInt8]) throws(DesktopNotificationsError) -> DBusMessage {
        let total = try frameLength(bytes[...])
        guard bytes.count == total else {
            throw .malformedMessage("a message of \(bytes.count) bytes whose header announces \(total)")
        }
        var reader = try DBusReader(bytes: bytes)
        reader.offset = 1
        let kindByte = try reader.readByte()
        let flags = Flags(rawValue: try reader.readByte())
        reader.offset = 8
        let serial = try reader.readUInt32()
        guard serial != 0 else { throw .malformedMessage("a message with serial 0") }
        guard let kind = Kind(rawValue: kindByte) else {
            throw .malformedMessage("message type \(kindByte) (1 to 4 exist)")
        }
        reader.offset = 12
        let fieldType = DBusType.array(.structure([.byte, .variant]))
        guard case .array(_, let fields) = try reader.read(fieldType, depth: 0) else {
            throw .malformedMessage("header fields that are not an array")
        }
        var message = DBusMessage(kind: kind, flags: flags, serial: serial)
        var signature = ""
        for field in fields {
            guard case .structure(let parts) = field, parts.count == 2, case .byte(let code) = parts[0],
                case .variant(let value) = parts[1]
            else { throw .malformedMessage("a header field that is not (yv)") }
            try message.setField(code, value, signature: &signature)
        }
        try reader.align(8)
        let types = try DBusType.parse(signature)
        for type in types { message.body.append(try reader.read(type, depth: 0)) }
        guard reader.offset == bytes.count else {
            throw .malformedMessage(
                "a body of signature \"\(signature)\" followed by \(bytes.count - reader.offset) "
                    + "unread bytes")
        }
        try message.checkRequiredFields()
        return message
    }

    private mutating func setField(_ code: UInt8, _ value: DBusValue, signature: inout String)
        throws(DesktopNotificationsError)
    {
        // Unknown field codes are skipped, as the specification requires of a reader.
        guard let field = HeaderField(rawValue: code) else { return }
        switch (field, value) {
        case (.path, .objectPath(let text)): path = text
        case (.interface, .string(let text)): interface = text
        case (.member, .string(let text)): member = text
        case (.errorName, .string(let text)): errorName = text
        case (.replySerial, .uint32(let number)): replySerial = number
        case (.destination, .string(let text)): destination = text
        case (.sender, .string(let text)): sender = text
        case (.signature, .signature(let text)): signature = text
        case (.unixFDs, .uint32): break  // never negotiated: a bus sends none
        default:
            throw .malformedMessage("header field \(code) of type \(value.type.signature)")
        }
    }

    private func checkRequiredFields() throws(DesktopNotificationsError) {
        let missing: String? =
            switch kind {
            case .methodCall: path == nil ? "PATH" : member == nil ? "MEMBER" : nil
            case .signal: path == nil ? "PATH" : interface == nil ? "INTERFACE" : member == nil ? "MEMBER" : nil
            case .error: errorName == nil ? "ERROR_NAME" : replySerial == nil ? "REPLY_SERIAL" : nil
            case .methodReturn: replySerial == nil ? "REPLY_SERIAL" : nil
            }
        if let missing { throw .malformedMessage("a \(kind) message without its \(missing) header field") }
    }
}

/// Reads values from one whole message, bounds-checking every access: no length from the bus is trusted.
struct DBusReader {
    let bytes: [UInt8]
    let bigEndian: Bool
    var offset = 0

    /// A reader of `bytes`, whose first byte gives the byte order.
    init(bytes: [UInt8]) throws(DesktopNotificationsError) {
        switch bytes.first {
        case UInt8(ascii: "l"): bigEndian = false
        case UInt8(ascii: "B"): bigEndian = true
        case let other?: throw .malformedMessage("byte order 0x\(String(other, radix: 16)) (only 'l' and 'B' exist)")
        case nil: throw .malformedMessage("an empty message")
        }
        self.bytes = bytes
    }

    /// Skips the padding to `alignment`, which must be zero bytes.
    mutating func align(_ alignment: Int) throws(DesktopNotificationsError) {
        let padded = (offset + alignment - 1) / alignment * alignment
        try need(padded - offset, "padding")
        guard bytes[offset..<padded].allSatisfy({ $0 == 0 }) else {
            throw .malformedMessage("non-zero padding at byte \(offset)")
        }
        offset = padded
    }

    mutating func readByte() throws(DesktopNotificationsError) -> UInt8 {
        try need(1, "a byte")
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt32() throws(DesktopNotificationsError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readInteger(4))
    }

    /// An unsigned integer of `size` bytes, aligned to its size.
    private mutating func readInteger(_ size: Int) throws(DesktopNotificationsError) -> UInt64 {
        try align(size)
        try need(size, "a \(size * 8)-bit number")
        var value: UInt64 = 0
        for index in 0..<size {
            let byte = UInt64(bytes[offset + (bigEndian ? index : size - 1 - index)])
            value = value << 8 | byte
        }
        offset += size
        return value
    }

    /// A value of `type`; `depth` counts the containers and variants around it.
    mutating func read(_ type: DBusType, depth: Int) throws(DesktopNotificationsError) -> DBusValue {
        guard depth <= DBusMessage.maximumDepth else {
            throw .malformedMessage("values nested deeper than \(DBusMessage.maximumDepth)")
        }
        switch type {
        case .byte: return .byte(try readByte())
        case .bool:
            let raw = try readUInt32()
            guard raw <= 1 else { throw .malformedMessage("a boolean of value \(raw) (only 0 and 1 exist)") }
            return .bool(raw == 1)
        case .int16: return .int16(Int16(truncatingIfNeeded: try readInteger(2)))
        case .uint16: return .uint16(UInt16(truncatingIfNeeded: try readInteger(2)))
        case .int32: return .int32(Int32(truncatingIfNeeded: try readInteger(4)))
        case .uint32: return .uint32(try readUInt32())
        case .int64: return .int64(Int64(bitPattern: try readInteger(8)))
        case .uint64: return .uint64(try readInteger(8))
        case .double: return .double(Double(bitPattern: try readInteger(8)))
        case .unixFD: return .unixFD(try readUInt32())
        case .string: return .string(try readText(lengthSize: 4, what: "string"))
        case .objectPath:
            let path = try readText(lengthSize: 4, what: "object path")
            guard DBusNames.isObjectPath(path) else { throw .malformedMessage("the invalid object path \"\(path)\"") }
            return .objectPath(path)
        case .signature:
            let signature = try readText(lengthSize: 1, what: "signature")
            _ = try DBusType.parse(signature)
            return .signature(signature)
        case .array(let element):
            let length = Int(try readUInt32())
            guard length <= DBusMessage.maximumArrayLength else {
                throw .malformedMessage("an array of \(length) bytes (the limit is \(DBusMessage.maximumArrayLength))")
            }
            try align(element.alignment)
            try need(length, "an array of \(length) bytes")
            let end = offset + length
            var elements: [DBusValue] = []
            while offset < end { elements.append(try read(element, depth: depth + 1)) }
            guard offset == end else {
                throw .malformedMessage("an array whose last element runs \(offset - end) bytes past its length")
            }
            return .array(element: element, elements)
        case .structure(let fields):
            try align(8)
            var values: [DBusValue] = []
            for field in fields { values.append(try read(field, depth: depth + 1)) }
            return .structure(values)
        case .dictEntry(let keyType, let valueType):
            try align(8)
            let key = try read(keyType, depth: depth + 1)
            return .dictEntry(key: key, value: try read(valueType, depth: depth + 1))
        case .variant:
            let signature = try readText(lengthSize: 1, what: "variant signature")
            let types = try DBusType.parse(signature)
            guard types.count == 1 else {
                throw .malformedMessage("a variant of signature \"\(signature)\" (exactly one complete type is needed)")
            }
            return .variant(try read(types[0], depth: depth + 1))
        }
    }

    /// Text behind a length of `lengthSize` bytes: valid UTF-8 without NUL, then a NUL.
    private mutating func readText(lengthSize: Int, what: String) throws(DesktopNotificationsError) -> String {
        let length = lengthSize == 1 ? Int(try readByte()) : Int(try readUInt32())
        // Compared before adding so that an absurd length cannot overflow.
        guard length < bytes.count - offset else {
            throw .malformedMessage("a \(what) of \(length) bytes at byte \(offset), past the end of the message")
        }
        let text = bytes[offset..<offset + length]
        guard bytes[offset + length] == 0 else { throw .malformedMessage("a \(what) not ending in NUL") }
        guard !text.contains(0), let decoded = String(validating: text, as: UTF8.self) else {
            throw .malformedMessage("a \(what) that is not valid UTF-8 without NUL bytes")
        }
        offset += length + 1
        return decoded
    }

    private func need(_ count: Int, _ what: String) throws(DesktopNotificationsError) {
        guard count <= bytes.count - offset else {
            throw .malformedMessage("truncated: \(what) at byte \(offset) of \(bytes.count)")
        }
    }
}
