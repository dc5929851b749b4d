/// A message type that writes its own JSON text straight into the message's bytes.
///
/// Foundation's `JSONEncoder` first builds a tree of dictionaries and boxed values and then serialises it: about
/// 30 ns per byte of output. Replies whose size grows with the number of apps, requests or log lines (`ListApps`,
/// `Tasks`, `Log`) and the replies of the SDK's hottest calls write themselves instead, several times faster, on the
/// daemon's event loop. ``VarlinkCodec/encodeReply(_:continues:)`` uses this whenever the reply conforms. The text
/// must decode to the same value as the type's `Encodable` form (the protocol tests check each conformance against
/// `JSONEncoder`'s output): the same keys, with `null` or a missing key exactly where `encode(to:)` puts them.
public protocol VarlinkDirectEncodable: Encodable {
    /// Appends the JSON text of `self`; throws ``VarlinkDirectJSON/NonFiniteNumber`` for a value JSON cannot hold,
    /// as `JSONEncoder` does.
    func appendJSON(to json: inout VarlinkDirectJSON) throws
}

/// The bytes of a JSON text being written by ``VarlinkDirectEncodable`` types: keys and punctuation are appended as
/// they are, values through the methods below.
public struct VarlinkDirectJSON: Sendable {
    /// The text so far (UTF-8, no NUL).
    public internal(set) var bytes: [UInt8]

    /// A number JSON cannot represent (infinity or NaN).
    public struct NonFiniteNumber: Error, CustomStringConvertible {
        public let value: Double
        public var description: String { "\(value) cannot be written as a JSON number" }
    }

    /// Goes on writing after `bytes`.
    init(continuing bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Starts a text, reserving `capacity` bytes.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends `text` as it is: keys with their quotes and colon, commas, braces.
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends a JSON value already written as text (by Foundation's encoder, for a rare nested member).
    public mutating func json(_ encoded: some Sequence<UInt8>) {
        bytes.append(contentsOf: encoded)
    }

    /// Appends a JSON string: quotes and backslashes escaped, control characters as `\u00XX`.
    public mutating func string(_ value: String) {
        VarlinkCodec.appendQuoted(value, to: &bytes)
    }

    /// Appends a JSON number.
    public mutating func number(_ value: Double) throws {
        guard value.isFinite else { throw NonFiniteNumber(value: value) }
        // The shortest text that reads back as the same Double ("0.1", "1e-05", "1.0"): valid JSON.
        bytes.append(contentsOf: value.description.utf8)
    }

    /// Appends a JSON integer.
    public mutating func number<Integer: BinaryInteger>(_ value: Integer) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Appends `true` or `false`.
    public mutating func bool(_ value: Bool) {
        raw(value ? "true" : "false")
    }

    /// Appends `null`.
    public mutating func null() { raw("null") }

    /// Appends a string or `null`.
    public mutating func string(orNull value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Appends a number or `null`.
    public mutating func number(orNull value: Double?) throws {
        if let value { try number(value) } else { null() }
    }

    /// Appends an integer or `null`.
    public mutating func number<Integer: BinaryInteger>(orNull value: Integer?) {
        if let value { number(value) } else { null() }
    }

    /// Appends `true`, `false` or `null`.
    public mutating func bool(orNull value: Bool?) {
        if let value { bool(value) } else { null() }
    }

    /// Appends a JSON array of strings.
    public mutating func strings(_ values: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Appends a JSON array of values that write themselves.
    public mutating func array<Element: VarlinkDirectEncodable>(_ values: [Element]) throws {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try value.appendJSON(to: &self)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
