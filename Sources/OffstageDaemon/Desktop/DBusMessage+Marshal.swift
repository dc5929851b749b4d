extension DBusMessage {
    /// The header field codes of the specification.
    enum HeaderField: UInt8 {
        case path = 1
        case interface, member, errorName, replySerial, destination, sender, signature, unixFDs
    }

    /// The message as bytes on the wire, little-endian, with `serial`.
    ///
    /// - Throws: `.unsupportedValue` when a value cannot be sent as it is (a string with a NUL, an invalid object
    ///   path or signature, an array whose elements are not of its element type, a message over the size limit).
    func marshal(serial: UInt32) throws(DesktopNotificationsError) -> [UInt8] {
        guard serial != 0 else { throw .unsupportedValue("a message serial of 0") }
        var bodyWriter = DBusWriter()
        for value in body { try bodyWriter.write(value, depth: 0) }
        let signature = self.signature
        var fields: [DBusValue] = []
        func add(_ code: HeaderField, _ value: DBusValue?) {
            if let value { fields.append(.structure([.byte(code.rawValue), .variant(value)])) }
        }
        add(.path, path.map { .objectPath($0) })
        add(.interface, interface.map { .string($0) })
        add(.member, member.map { .string($0) })
        add(.errorName, errorName.map { .string($0) })
        add(.replySerial, replySerial.map { .uint32($0) })
        add(.destination, destination.map { .string($0) })
        add(.sender, sender.map { .string($0) })
        add(.signature, signature.isEmpty ? nil : .signature(signature))

        var writer = DBusWriter()
        writer.bytes = [UInt8(ascii: "l"), kind.rawValue, flags.rawValue, 1]
        writer.appendUInt32(UInt32(bodyWriter.bytes.count))
        writer.appendUInt32(serial)
        let fieldType = DBusType.structure([.byte, .variant])
        try writer.write(.array(element: fieldType, fields), depth: 0)
        writer.pad(to: 8)
        guard writer.bytes.count + bodyWriter.bytes.count <= Self.maximumLength else {
            throw .unsupportedValue(
                "a message of \(writer.bytes.count + bodyWriter.bytes.count) bytes "
                    + "(the limit is \(Self.maximumLength))")
        }
        // The body starts on an 8-byte boundary, so its padding, computed from its own start, is the same.
        return writer.bytes + bodyWriter.bytes
    }
}

/// Appends values in the little-endian wire format, padding each to its alignment from the start of `bytes`.
struct DBusWriter {
    var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func appendUInt32(_ value: UInt32) {
        pad(to: 4)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: DBusValue, depth: Int) throws(DesktopNotificationsError) {
        guard depth <= DBusMessage.maximumDepth else {
            throw .unsupportedValue("a value nested deeper than \(DBusMessage.maximumDepth)")
        }
        switch value {
        case .byte(let byte): bytes.append(byte)
        case .bool(let flag): appendUInt32(flag ? 1 : 0)
        case .int16(let number): append(number.littleEndian)
        case .uint16(let number): append(number.littleEndian)
        case .int32(let number): append(number.littleEndian)
        case .uint32(let number): appendUInt32(number)
        case .int64(let number): append(number.littleEndian)
        case .uint64(let number): append(number.littleEndian)
        case .double(let number): append(number.bitPattern.littleEndian)
        case .unixFD(let index): appendUInt32(index)
        case .string(let text):
            try appendString(text, what: "string")
        case .objectPath(let path):
            guard DBusNames.isObjectPath(path) else { throw .unsupportedValue("the object path \"\(path)\"") }
            try appendString(path, what: "object path")
        case .signature(let signature):
            try appendSignature(signature)
        case .array(let element, let elements):
            appendUInt32(0)
            let lengthAt = bytes.count - 4
            pad(to: element.alignment)
            let start = bytes.count
            for item in elements {
                guard item.type == element else {
                    throw .unsupportedValue(
                        "an array of \(element.signature) holding a value of type \(item.type.signature)")
                }
                try write(item, depth: depth + 1)
            }
            let length = bytes.count - start
            guard length <= DBusMessage.maximumArrayLength else {
                throw .unsupportedValue("an array of \(length) bytes (the limit is \(DBusMessage.maximumArrayLength))")
            }
            withUnsafeBytes(of: UInt32(length).littleEndian) {
                bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .unsupportedValue("an empty struct") }
            pad(to: 8)
            for field in fields { try write(field, depth: depth + 1) }
        case .dictEntry(let key, let value):
            guard key.type.isBasic else { throw .unsupportedValue("a dict entry keyed by a \(key.type.signature)") }
            pad(to: 8)
            try write(key, depth: depth + 1)
            try write(value, depth: depth + 1)
        case .variant(let inner):
            try appendSignature(inner.type.signature)
            try write(inner, depth: depth + 1)
        }
    }

    private mutating func append<Number: FixedWidthInteger>(_ littleEndian: Number) {
        pad(to: MemoryLayout<Number>.size)
        withUnsafeBytes(of: littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A string or object path: its byte length, its UTF-8 bytes, a NUL.
    private mutating func appendString(_ text: String, what: String) throws(DesktopNotificationsError) {
        let utf8 = Array(text.utf8)
        guard !utf8.contains(0) else { throw .unsupportedValue("a \(what) containing a NUL byte") }
        appendUInt32(UInt32(clamping: utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    /// A signature: its byte length in one byte, its bytes, a NUL.
    private mutating func appendSignature(_ signature: String) throws(DesktopNotificationsError) {
        do {
            _ = try DBusType.parse(signature)
        } catch {
            throw .unsupportedValue("the signature \"\(signature)\"")
        }
        let utf8 = Array(signature.utf8)
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }
}

/// The syntax rules of names the wire format checks.
enum DBusNames {
    /// "/" or "/" followed by non-empty elements of `[A-Za-z0-9_]` separated by single slashes.
    static func isObjectPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousWasSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
            } else {
                let allowed =
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
                guard allowed else { return false }
                previousWasSlash = false
            }
        }
        return true
    }
}
