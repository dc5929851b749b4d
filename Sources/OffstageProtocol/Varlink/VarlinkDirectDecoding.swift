import Foundation

/// Hand-read JSON for the few messages that pass at every step of an app's life: begin and end of background tasks,
/// callbacks and their answers (the writing half is ``VarlinkDirectEncodable``).
///
/// Foundation's `JSONDecoder` costs several microseconds per message, most of it fixed (containers, coding paths),
/// which made it a large share of a daemon call and of the SDK's. Types that conform read themselves from the members
/// ``JSONEnvelopeScanner`` finds; any input the hand reader does not take exactly as it is (an escape, a number of
/// another form, a missing member) goes to `JSONDecoder` as before, so errors and unusual-but-valid JSON behave the
/// same. Tests and the varlink-codec fuzz target check each conforming type against `JSONDecoder`.
protocol VarlinkDirectDecodable: Decodable {
    /// Reads `self`; throws ``VarlinkDirectObject/Unusable`` for anything `JSONDecoder` should judge instead.
    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable)
}

/// The members of one JSON object, already checked against the whole JSON grammar by ``JSONEnvelopeScanner``.
struct VarlinkDirectObject {
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
    func object(_ key: String) throws(Unusable) -> VarlinkDirectObject? {
        guard let member = find(key), member.kind != .null else { return nil }
        guard member.kind == .object else { throw Unusable() }
        return try VarlinkDirectObject(text(member))
    }

    /// Whether `key` is there with a value other than null.
    func has(_ key: String) -> Bool {
        guard let member = find(key) else { return false }
        return member.kind != .null
    }
}

extension VarlinkCodec {
    /// Appends the JSON of `parameters`: written by the type itself when it can (``VarlinkDirectEncodable``), else
    /// by `JSONEncoder`, which also reports a number JSON cannot hold, as it always did.
    static func appendParameters<P: Encodable>(_ parameters: P, to bytes: inout [UInt8]) throws {
        if let direct = parameters as? any VarlinkDirectEncodable {
            let mark = bytes.count
            var json = VarlinkDirectJSON(continuing: bytes)
            bytes = []
            do {
                try direct.appendJSON(to: &json)
                bytes = json.bytes
                return
            } catch is VarlinkDirectJSON.NonFiniteNumber {
                json.bytes.removeSubrange(mark...)
                bytes = json.bytes
            }
        }
        bytes.append(contentsOf: try encoder.encode(parameters))
    }

    /// `P` read from the JSON object in `bytes`, by hand when its type can and the text is plain enough, else by
    /// `JSONDecoder` (which then also gives the errors).
    static func decodeParameters<P: Decodable>(_ type: P.Type, from bytes: Data) throws -> P {
        if let direct = P.self as? any VarlinkDirectDecodable.Type {
            let decoded = bytes.withUnsafeBytes { buffer -> (any VarlinkDirectDecodable)? in
                guard let object = try? VarlinkDirectObject(buffer) else { return nil }
                return try? direct.init(direct: object)
            }
            if let decoded { return decoded as! P }
        }
        return try decoder.decode(P.self, from: bytes)
    }
}
