import Foundation

/// Parameters or a result with no fields: encodes to `{}` and decodes from any object.
public struct VarlinkEmpty: Codable, Sendable, Hashable {
    /// The empty value.
    public init() {}
}

/// A call as a client sends it: `{"method": "iface.Method", "parameters": {...}, "more": true, "oneway": true}`.
///
/// Flags that are `false` are left out of the message, as the Varlink specification allows and as every
/// implementation does.
public struct VarlinkCall<Parameters: Encodable>: Encodable {
    /// The fully qualified method, `<interface>.<Method>`.
    public var method: String
    /// The method's input.
    public var parameters: Parameters
    /// The client accepts several replies, each but the last with `"continues": true`.
    public var more: Bool
    /// The client wants no reply at all.
    public var oneway: Bool
    /// The client asks to take the connection over for another protocol after the reply.
    public var upgrade: Bool

    /// A call of `method` with `parameters`.
    public init(method: String, parameters: Parameters, more: Bool = false, oneway: Bool = false, upgrade: Bool = false)
    {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    private enum CodingKeys: String, CodingKey {
        case method, parameters, more, oneway, upgrade
    }

    /// Encodes the envelope, leaving out flags that are `false`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encode(parameters, forKey: .parameters)
        if more { try container.encode(true, forKey: .more) }
        if oneway { try container.encode(true, forKey: .oneway) }
        if upgrade { try container.encode(true, forKey: .upgrade) }
    }
}

extension VarlinkCall: Sendable where Parameters: Sendable {}

/// The envelope of a call as a service receives it, without its parameters, which are decoded separately once the
/// method (and so their type) is known.
public struct VarlinkCallHeader: Sendable, Hashable {
    /// The fully qualified method, `<interface>.<Method>`.
    public var method: String
    /// The client accepts a stream of replies.
    public var more: Bool
    /// The client wants no reply.
    public var oneway: Bool
    /// The client asks for a connection upgrade.
    public var upgrade: Bool

    /// A header with the given fields.
    public init(method: String, more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// The interface part of `method`: everything before the last dot; empty when there is no dot.
    public var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The method's own name: everything after the last dot.
    public var memberName: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }
}

/// A successful reply as a service sends it: `{"parameters": {...}, "continues": true}`.
public struct VarlinkReply<Parameters> {
    /// The method's output.
    public var parameters: Parameters
    /// More replies to the same call follow.
    public var continues: Bool

    /// A reply carrying `parameters`.
    public init(parameters: Parameters, continues: Bool = false) {
        self.parameters = parameters
        self.continues = continues
    }
}

extension VarlinkReply: Sendable where Parameters: Sendable {}
extension VarlinkReply: Equatable where Parameters: Equatable {}

extension VarlinkReply: Encodable where Parameters: Encodable {
    private enum CodingKeys: String, CodingKey {
        case parameters, continues
    }

    /// Encodes the envelope, leaving out `continues` when it is `false`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(parameters, forKey: .parameters)
        if continues { try container.encode(true, forKey: .continues) }
    }
}

/// A reply as a client receives it: a result or an error.
public enum VarlinkReplyMessage<Parameters> {
    /// A result; `continues` says whether more replies to the same call follow.
    case reply(Parameters, continues: Bool)
    /// An error reply. It always ends the call.
    case error(VarlinkError)
}

extension VarlinkReplyMessage: Sendable where Parameters: Sendable {}
extension VarlinkReplyMessage: Equatable where Parameters: Equatable {}

/// A call as a service receives it: its envelope, the message it came in, and where in that message the parameters
/// are, so that they are decoded once, straight from their own bytes, into the type the method expects.
public struct VarlinkReceivedCall: Sendable {
    /// The envelope: method and flags.
    public let header: VarlinkCallHeader
    /// The whole message, JSON text without its NUL terminator.
    public let message: Data
    /// Offsets of the `parameters` value in `message`; `nil` when absent or `null`.
    let parameters: Range<Int>?
    let parametersAreObject: Bool

    /// The call's parameters as a `P`; a call without parameters (or with `null`) has `{}`.
    ///
    /// - Throws: `org.varlink.service.InvalidParameter` whose `parameter` is the top-level field that is missing or
    ///   has the wrong type, and whose `description` says what was expected where.
    public func decodeParameters<P: Decodable>(as type: P.Type = P.self) throws(VarlinkError) -> P {
        if P.self == VarlinkEmpty.self, parameters == nil || parametersAreObject {
            // Nothing to decode: skip the decoder's fixed cost.
            return VarlinkEmpty() as! P
        }
        do {
            guard let parameters else { return try VarlinkCodec.decodeParameters(P.self, from: VarlinkCodec.emptyObject) }
            let start = message.startIndex
            return try VarlinkCodec.decodeParameters(
                P.self,
                from: message[(start + parameters.lowerBound)..<(start + parameters.upperBound)]
            )
        } catch let error as DecodingError {
            throw VarlinkCodec.invalidParameter(for: error)
        } catch {
            throw .invalidParameter("parameters", description: "The parameters could not be decoded: \(error)")
        }
    }
}

/// Encoding and decoding of Varlink messages. Messages here are the JSON text only: the transport adds and strips
/// the NUL terminator (see `VarlinkFraming`).
///
/// Envelopes are written and read by hand around Foundation's coders: the coders only ever see the parameters. That
/// halves the JSON work per call compared with coding the envelope as a `Codable` type too (measured: a small call's
/// server side went from 5 µs to 2 µs). A received call is checked against the whole JSON grammar first, so a
/// broken message is refused whether or not its parameters are ever decoded.
///
/// Failures come out as the `VarlinkError` a service replies: `io.offstage.Protocol.MalformedMessage` for a broken
/// envelope, `org.varlink.service.InvalidParameter` naming the offending parameter for parameters of the wrong shape.
public enum VarlinkCodec {
    // Foundation's coders are thread-safe and cheaper reused than made for each message.
    static let encoder = JSONEncoder()
    static let decoder = JSONDecoder()
    static let emptyObject = Data("{}".utf8)

    // MARK: Calls

    /// The JSON text of a call of `method` with `parameters`.
    public static func encodeCall<P: Encodable>(
        _ method: String,
        _ parameters: P,
        more: Bool = false,
        oneway: Bool = false
    ) throws -> Data {
        var bytes: [UInt8] = []
        try appendCall(method, parameters, more: more, oneway: oneway, to: &bytes)
        return Data(bytes)
    }

    /// Appends the JSON text of a call to `bytes`, for callers that add the NUL and send from their own buffer.
    static func appendCall<P: Encodable>(
        _ method: String,
        _ parameters: P,
        more: Bool,
        oneway: Bool,
        to bytes: inout [UInt8]
    ) throws {
        let mark = bytes.count
        bytes.reserveCapacity(bytes.count + method.utf8.count + 128)
        bytes.append(contentsOf: #"{"method":"#.utf8)
        appendQuoted(method, to: &bytes)
        bytes.append(contentsOf: #","parameters":"#.utf8)
        do {
            try appendParameters(parameters, to: &bytes)
        } catch {
            bytes.removeSubrange(mark...)
            throw error
        }
        if more { bytes.append(contentsOf: #","more":true"#.utf8) }
        if oneway { bytes.append(contentsOf: #","oneway":true"#.utf8) }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The call in `message`: its envelope, and its parameters ready to decode.
    ///
    /// - Throws: `io.offstage.Protocol.MalformedMessage` when `message` is not JSON, not an object, has no string
    ///   `method`, or has a flag that is not a boolean.
    public static func decodeCall(_ message: Data) throws(VarlinkError) -> VarlinkReceivedCall {
        var method: String?
        var more = false
        var oneway = false
        var upgrade = false
        var parameters: Range<Int>?
        var parametersAreObject = false
        let result: Result<Void, VarlinkError> = message.withUnsafeBytes { bytes in
            do throws(JSONEnvelopeScanner.Failure) {
                try JSONEnvelopeScanner.scanObject(bytes) { member throws(JSONEnvelopeScanner.Failure) in
                    switch key(member, in: bytes) {
                    case "method":
                        guard case .string(let hasEscapes) = member.kind else {
                            throw .init(offset: member.value.lowerBound, reason: "method")
                        }
                        // Escapes that decode to no text (an unpaired surrogate) must not read as "no method".
                        guard let text = string(member.value, hasEscapes: hasEscapes, in: bytes) else {
                            throw .init(offset: member.value.lowerBound, reason: "method text")
                        }
                        method = text
                    case "more": more = try flag(member, "more")
                    case "oneway": oneway = try flag(member, "oneway")
                    case "upgrade": upgrade = try flag(member, "upgrade")
                    case "parameters":
                        parameters = member.kind == .null ? nil : member.value
                        parametersAreObject = member.kind == .object
                    default: break
                    }
                }
                return .success(())
            } catch {
                return .failure(malformed(error))
            }
        }
        try result.get()
        guard let method else {
            throw .malformedMessage(
                reason: "the call has no \"method\" field; a call is {\"method\": \"iface.Method\"}")
        }
        return VarlinkReceivedCall(
            header: VarlinkCallHeader(method: method, more: more, oneway: oneway, upgrade: upgrade),
            message: message,
            parameters: parameters,
            parametersAreObject: parametersAreObject
        )
    }

    /// The envelope of the call in `message` (see `decodeCall`).
    public static func decodeCallHeader(_ message: Data) throws(VarlinkError) -> VarlinkCallHeader {
        try decodeCall(message).header
    }

    /// The `parameters` of the call in `message` as a `P` (see `decodeCall` and
    /// `VarlinkReceivedCall.decodeParameters`).
    public static func decodeCallParameters<P: Decodable>(
        _ message: Data,
        as type: P.Type = P.self
    ) throws(VarlinkError) -> P {
        try decodeCall(message).decodeParameters(as: P.self)
    }

    // MARK: Replies

    /// The JSON text of a successful reply. A reply that writes its own JSON (``VarlinkDirectEncodable``) does so;
    /// any other goes through `JSONEncoder`.
    public static func encodeReply<R: Encodable>(_ parameters: R, continues: Bool = false) throws -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        bytes.append(contentsOf: #"{"parameters":"#.utf8)
        try appendParameters(parameters, to: &bytes)
        bytes.append(contentsOf: continues ? #","continues":true}"#.utf8 : "}".utf8)
        return Data(bytes)
    }

    /// The JSON text of an error reply.
    public static func encodeError(_ error: VarlinkError) -> Data {
        // Only a non-finite number in the parameters can fail to encode; the name alone still tells the client.
        let encoded = (try? encoder.encode(error.parameters)) ?? emptyObject
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count + error.name.utf8.count + 32)
        bytes.append(contentsOf: #"{"error":"#.utf8)
        appendQuoted(error.name, to: &bytes)
        bytes.append(contentsOf: #","parameters":"#.utf8)
        bytes.append(contentsOf: encoded)
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    /// The reply in `message`, with a result decoded as an `R`. A reply without `parameters` decodes `R` from `{}`.
    ///
    /// - Throws: `DecodingError` when `message` is not a reply or its parameters are not an `R`.
    public static func decodeReply<R: Decodable>(
        _ message: Data,
        as type: R.Type = R.self
    ) throws -> VarlinkReplyMessage<R> {
        var errorName: String?
        var continues = false
        var parameters: Range<Int>?
        var parametersAreObject = false
        let scan: Result<Void, DecodingError> = message.withUnsafeBytes { bytes in
            do throws(JSONEnvelopeScanner.Failure) {
                try JSONEnvelopeScanner.scanObject(bytes) { member throws(JSONEnvelopeScanner.Failure) in
                    switch key(member, in: bytes) {
                    case "error":
                        guard case .string(let hasEscapes) = member.kind else {
                            throw .init(offset: member.value.lowerBound, reason: "\"error\" must be a string")
                        }
                        // Escapes that decode to no text (an unpaired surrogate) must not make an error reply read
                        // as a successful one.
                        guard let name = string(member.value, hasEscapes: hasEscapes, in: bytes) else {
                            throw .init(
                                offset: member.value.lowerBound,
                                reason: "\"error\" is not valid text: an escape in it encodes no character")
                        }
                        errorName = name
                    case "continues":
                        switch member.kind {
                        case .bool(let value): continues = value
                        case .null: continues = false
                        default: throw .init(offset: member.value.lowerBound, reason: "\"continues\" must be a boolean")
                        }
                    case "parameters":
                        parameters = member.kind == .null ? nil : member.value
                        parametersAreObject = member.kind == .object
                    default: break
                    }
                }
                return .success(())
            } catch {
                return .failure(
                    .dataCorrupted(.init(codingPath: [], debugDescription: "\(error.reason) (at byte \(error.offset))"))
                )
            }
        }
        try scan.get()
        let slice = parameters.map {
            message[(message.startIndex + $0.lowerBound)..<(message.startIndex + $0.upperBound)]
        }
        if let errorName {
            guard let slice, parametersAreObject else { return .error(VarlinkError(errorName)) }
            return .error(
                VarlinkError(errorName, parameters: try decoder.decode([String: JSONValue].self, from: slice)))
        }
        if R.self == VarlinkEmpty.self, slice == nil || parametersAreObject {
            return .reply(VarlinkEmpty() as! R, continues: continues)
        }
        return .reply(try decodeParameters(R.self, from: slice ?? emptyObject), continues: continues)
    }

    // MARK: Envelope helpers

    /// A member's key as a string (decoding escapes in the rare key that has them).
    private static func key(_ member: JSONEnvelopeScanner.Member, in bytes: UnsafeRawBufferPointer) -> String {
        let range = (member.key.lowerBound - 1)..<(member.key.upperBound + 1)
        return string(range, hasEscapes: member.keyHasEscapes, in: bytes) ?? ""
    }

    /// The string whose JSON text (quotes included) is at `range`.
    private static func string(_ range: Range<Int>, hasEscapes: Bool, in bytes: UnsafeRawBufferPointer) -> String? {
        let text = UnsafeRawBufferPointer(rebasing: bytes[range])
        if !hasEscapes { return String(decoding: text.dropFirst().dropLast(), as: UTF8.self) }
        return try? decoder.decode(String.self, from: Data(text))
    }

    private static func flag(_ member: JSONEnvelopeScanner.Member, _ name: String) throws(JSONEnvelopeScanner.Failure)
        -> Bool
    {
        switch member.kind {
        case .bool(let value): return value
        case .null: return false
        default: throw .init(offset: member.value.lowerBound, reason: name)
        }
    }

    private static func malformed(_ failure: JSONEnvelopeScanner.Failure) -> VarlinkError {
        if failure.isNotAnObject { return .malformedMessage(reason: "a Varlink message must be a JSON object") }
        switch failure.reason {
        case "method":
            return .malformedMessage(
                reason: "\"method\" must be a string naming the method, e.g. \"org.varlink.service.GetInfo\"")
        case "method text":
            return .malformedMessage(
                reason: "\"method\" is not valid text: an escape in it encodes no character (an unpaired surrogate?)")
        case "more", "oneway", "upgrade":
            return .malformedMessage(reason: "\"\(failure.reason)\": expected a boolean")
        default:
            return .malformedMessage(
                reason: "the message is not valid JSON: \(failure.reason) (at byte \(failure.offset))")
        }
    }

    /// Appends `string` as a JSON string literal.
    static func appendQuoted(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    // MARK: Error descriptions

    /// `InvalidParameter` for a failure to decode a call's parameters: the parameter is the first field of the
    /// failing path, the description names the whole path and what was expected there.
    static func invalidParameter(for error: DecodingError) -> VarlinkError {
        // The decoder only ever sees the parameters' own bytes, so the path starts at a parameter's name, even when
        // that name is "parameters".
        let (keys, text) = describe(error)
        guard let parameter = keys.first else {
            return .invalidParameter("parameters", description: "parameters: \(text)")
        }
        return .invalidParameter(parameter, description: "\(keys.joined(separator: ".")): \(text)")
    }

    /// The coding path (with the key that was not found, when one was not) and a sentence saying what was wrong.
    static func describe(_ error: DecodingError) -> (path: [String], text: String) {
        func keys(_ context: DecodingError.Context) -> [String] {
            // An array index is "[i]". A dictionary key made of digits has an intValue too (the standard library's
            // dictionary coding key parses it), but its stringValue is the key itself and reads as that number,
            // whereas an index's reads "Index i": a key that reads as a number is a name, not an index.
            context.codingPath.map { key in
                key.intValue.map { Int(key.stringValue) == nil ? "[\($0)]" : key.stringValue } ?? key.stringValue
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            return (keys(context) + [key.stringValue], "required but missing")
        case .valueNotFound(let type, let context):
            return (keys(context), "expected \(describe(type)), found null")
        case .typeMismatch(let type, let context):
            return (keys(context), "expected \(describe(type))")
        case .dataCorrupted(let context):
            var text = context.debugDescription
            if keys(context).isEmpty, text.contains("not valid JSON") {
                // Foundation reports a number that does not fit its field (1.5 for an integer) this way too, with
                // no path; the JSON itself was already checked, so say what is most likely.
                text =
                    "a value does not fit its field (a fraction or an out-of-range number where an integer is "
                    + "expected?)"
            }
            return (keys(context), text)
        @unknown default:
            return ([], "\(error)")
        }
    }

    /// A human name for the type a decoder expected.
    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is Substring.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type: return "an integer"
        case is UInt.Type, is UInt64.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type:
            return "a non-negative integer"
        case is Double.Type, is Float.Type: return "a number"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Dictionary<") || name.hasPrefix("KeyedDecodingContainer") { return "an object" }
            if name.hasPrefix("Array<") || name.hasPrefix("UnkeyedDecodingContainer") { return "an array" }
            return "a value of type \(name)"
        }
    }
}
