import Foundation

/// Hand-written JSON for the few messages that pass at every step of an app's life: begin and end of background
/// tasks, callbacks and their answers.
///
/// Foundation's `JSONEncoder`/`JSONDecoder` cost several microseconds per message, most of it fixed (containers,
/// boxing, coding paths), which made them a large share of a daemon call. Types that conform write and read
/// themselves here; everything else — and any input the fast reader does not take exactly as it is — goes through
/// Foundation as before, so error messages and unusual-but-valid JSON behave the same. Tests check each conforming
/// type against Foundation's coders both ways.
protocol WireEncodable: Encodable {
    /// Writes the JSON object of `self` (the members `JSONEncoder` would write, in the same order). Returns false,
    /// having written anything, when it cannot: a number that is not finite; the caller then uses `JSONEncoder`,
    /// which reports that as it always did.
    func writeWire(_ writer: inout WireWriter) -> Bool
}

/// A type that can read itself from the members of a JSON object found by ``JSONEnvelopeScanner``.
protocol WireDecodable: Decodable {
    /// Reads `self`; throws ``WireObject/Unusable`` for anything `JSONDecoder` should judge instead (a missing
    /// member, a value of another form, an escape in a key).
    init(wire object: WireObject) throws(WireObject.Unusable)
}

/// Writes JSON into a byte array.
struct WireWriter {
    var bytes: [UInt8]
    private var needsComma = false

    init(into bytes: [UInt8] = []) {
        self.bytes = bytes
    }

    mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `"key":` (keys here are plain ASCII names).
    mutating func key(_ key: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: "\":".utf8)
        needsComma = true
    }

    mutating func value(_ number: UInt64) {
        bytes.append(contentsOf: String(number).utf8)
    }

    mutating func value(_ flag: Bool) {
        bytes.append(contentsOf: (flag ? "true" : "false").utf8)
    }

    mutating func value(_ text: String) {
        VarlinkCodec.appendQuoted(text, to: &bytes)
    }

    /// Writes a finite number in its shortest exact form; returns false for infinity and NaN, which JSON cannot hold.
    mutating func value(_ number: Double) -> Bool {
        guard number.isFinite else { return false }
        bytes.append(contentsOf: number.description.utf8)
        return true
    }

    mutating func value(_ numbers: [UInt64]) {
        bytes.append(UInt8(ascii: "["))
        for (index, number) in numbers.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            value(number)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes `"key":value` unless `value` is nil, as `encodeIfPresent` does.
    mutating func member(_ name: StaticString, _ text: String?) {
        guard let text else { return }
        key(name)
        value(text)
    }

    mutating func member(_ name: StaticString, _ number: UInt64?) {
        guard let number else { return }
        key(name)
        value(number)
    }

    mutating func member(_ name: StaticString, _ numbers: [UInt64]?) {
        guard let numbers else { return }
        key(name)
        value(numbers)
    }

    mutating func member(_ name: StaticString, _ number: Double?) -> Bool {
        guard let number else { return true }
        key(name)
        return value(number)
    }
}

/// The members of one JSON object, already checked against the whole JSON grammar by ``JSONEnvelopeScanner``.
struct WireObject {
    /// Why a fast read gave up; the caller then decodes with `JSONDecoder`.
    struct Unusable: Error {}

    private let bytes: UnsafeRawBufferPointer
    private var members: [(key: String, member: JSONEnvelopeScanner.Member)] = []

    /// Scans the object in `bytes`. Throws when they are not one object, or a key has an escape or repeats.
    init(_ bytes: UnsafeRawBufferPointer) throws(Unusable) {
        self.bytes = bytes
        var members: [(key: String, member: JSONEnvelopeScanner.Member)] = []
        var usable = true
        do {
            try JSONEnvelopeScanner.scanObject(bytes) { member throws(JSONEnvelopeScanner.Failure) in
                guard usable, !member.keyHasEscapes,
                    let key = String(validating: UnsafeRawBufferPointer(rebasing: bytes[member.key]), as: UTF8.self),
                    !members.contains(where: { $0.key == key })
                else {
                    usable = false
                    return
                }
                members.append((key, member))
            }
        } catch {
            throw Unusable()
        }
        guard usable else { throw Unusable() }
        self.members = members
    }

    private func find(_ key: String) -> JSONEnvelopeScanner.Member? {
        for entry in members where entry.key == key { return entry.member }
        return nil
    }

    private func text(_ member: JSONEnvelopeScanner.Member) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[member.value])
    }

    /// A member that must be there (not null).
    private func required<T>(_ value: T?) throws(Unusable) -> T {
        guard let value else { throw Unusable() }
        return value
    }

    /// A non-negative integer written with digits only; nil when absent or null.
    func unsigned(_ key: String) throws(Unusable) -> UInt64? {
        guard let member = find(key), member.kind != .null else { return nil }
        guard member.kind == .number else { throw Unusable() }
        var result: UInt64 = 0
        for byte in text(member) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw Unusable() }
            let (times, overflowTimes) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowTimes, !overflowSum else { throw Unusable() }
            result = sum
        }
        return result
    }

    func unsigned(required key: String) throws(Unusable) -> UInt64 { try required(try unsigned(key)) }

    /// A finite number; nil when absent or null.
    func double(_ key: String) throws(Unusable) -> Double? {
        guard let member = find(key), member.kind != .null else { return nil }
        guard member.kind == .number,
            let number = Double(String(decoding: text(member), as: UTF8.self)), number.isFinite
        else { throw Unusable() }
        return number
    }

    func double(required key: String) throws(Unusable) -> Double { try required(try double(key)) }

    /// A string without escapes, in valid UTF-8; nil when absent or null.
    func string(_ key: String) throws(Unusable) -> String? {
        guard let member = find(key), member.kind != .null else { return nil }
        guard member.kind == .string(hasEscapes: false),
            let text = String(validating: text(member).dropFirst().dropLast(), as: UTF8.self)
        else { throw Unusable() }
        return text
    }

    func string(required key: String) throws(Unusable) -> String { try required(try string(key)) }

    /// A boolean; nil when absent or null.
    func bool(_ key: String) throws(Unusable) -> Bool? {
        guard let member = find(key), member.kind != .null else { return nil }
        guard case .bool(let value) = member.kind else { throw Unusable() }
        return value
    }

    func bool(required key: String) throws(Unusable) -> Bool { try required(try bool(key)) }

    /// A nested object; nil when absent or null.
    func object(_ key: String) throws(Unusable) -> WireObject? {
        guard let member = find(key), member.kind != .null else { return nil }
        guard member.kind == .object else { throw Unusable() }
        return try WireObject(text(member))
    }

    /// Whether `key` is there with a value other than null.
    func has(_ key: String) -> Bool {
        guard let member = find(key) else { return false }
        return member.kind != .null
    }
}

extension VarlinkCodec {
    /// The JSON of `parameters`, written by hand when its type can, else by `JSONEncoder`.
    static func encodeParameters<P: Encodable>(_ parameters: P) throws -> [UInt8] {
        if let wire = parameters as? any WireEncodable {
            var writer = WireWriter()
            if wire.writeWire(&writer) { return writer.bytes }
        }
        return [UInt8](try encoder.encode(parameters))
    }

    /// `P` read from the JSON object in `bytes`, by hand when its type can and the text is plain enough, else by
    /// `JSONDecoder` (which then also gives the errors).
    static func decodeParameters<P: Decodable>(_ type: P.Type, from bytes: Data) throws -> P {
        if let wire = P.self as? any WireDecodable.Type {
            let decoded = bytes.withUnsafeBytes { buffer -> (any WireDecodable)? in
                guard let object = try? WireObject(buffer) else { return nil }
                return try? wire.init(wire: object)
            }
            if let decoded { return decoded as! P }
        }
        return try decoder.decode(P.self, from: bytes)
    }
}
