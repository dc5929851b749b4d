import Foundation

@testable import OffstageProtocol

/// The properties every input of the Varlink fuzz targets must keep (SPEC §11: malformed input on every interface
/// gets a clear error and changes nothing; these interfaces are fuzzed).
///
/// One file, compiled twice: SwiftPM builds it into this test target, where `VarlinkFuzzRegressionTests` replays
/// every committed fuzz input through it, and `scripts/fuzz` compiles it with `swiftc -sanitize=fuzzer` next to the
/// entry points in `Fuzz/Targets/`. It lives in the test target's folder because that is the one place both builds
/// can read without a symlink or a change to Package.swift. So it imports only Foundation and the module under test,
/// never `Testing`: a broken property is thrown as a `Violation`, and each side decides what that means (the fuzzer
/// aborts and keeps the input, the test records an issue naming the input's file).
enum VarlinkFuzzChecks {
    /// A property that did not hold, in words.
    struct Violation: Error, CustomStringConvertible {
        var description: String

        init(_ description: String) { self.description = description }
    }

    // MARK: - varlink-framing

    /// How a framing input is read: the first byte picks the message size limit (0–127 give 1…128 bytes, so that
    /// messages over the limit are common in short inputs; 128–255 give 64…8192 bytes, room for real messages), the
    /// next two seed the choices of how the rest, the stream, is cut into reads and drained. Cutting by a seed rather
    /// than by marker bytes keeps the stream itself free for the fuzzer to shape.
    struct FramingInput {
        /// `maximumMessageSize` of the reassembler under test.
        var limit: Int
        /// Seeds the read sizes, the API used for each read and when messages are taken out.
        var seed: UInt64
        /// The bytes as they arrive on the socket.
        var stream: [UInt8]

        /// The input's parts, or nil when it is too short to have any.
        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 3 else { return nil }
            limit = bytes[0] < 128 ? 1 + Int(bytes[0]) : 64 * Int(bytes[0] - 127)
            seed = UInt64(bytes[1]) << 8 | UInt64(bytes[2])
            stream = Array(bytes[3...])
        }
    }

    /// What a correct reassembler yields for a stream, worked out as plainly as possible: the reference that the
    /// fast reassemblers (`VarlinkFraming`, the daemon's `VarlinkFrameDecoder`) are held to.
    ///
    /// The stream is cut at every NUL. Messages come out in order until the first one longer than the limit; that
    /// one, or a trailing unterminated part already longer than the limit (it can only grow), is `MessageTooLarge`
    /// and nothing after it is delivered.
    struct FramingOutcome: Equatable, CustomStringConvertible {
        /// The messages delivered, without their NUL.
        var messages: [[UInt8]]
        /// The stream was refused as `MessageTooLarge`.
        var tooLarge: Bool

        /// The outcome a correct reassembler with `limit` reaches on `stream`.
        static func expected(stream: [UInt8], limit: Int) -> FramingOutcome {
            // `split` always returns at least one part: the bytes after the last NUL, possibly none.
            let parts = stream.split(separator: 0, maxSplits: .max, omittingEmptySubsequences: false)
            var messages: [[UInt8]] = []
            for part in parts.dropLast() {
                if part.count > limit { return FramingOutcome(messages: messages, tooLarge: true) }
                messages.append(Array(part))
            }
            return FramingOutcome(messages: messages, tooLarge: parts.last!.count > limit)
        }

        /// The number of bytes after the last NUL: what stays buffered when the stream is not refused.
        static func remainder(of stream: [UInt8]) -> Int {
            stream.count - (stream.lastIndex(of: 0).map { $0 + 1 } ?? 0)
        }

        var description: String {
            "\(messages.count) messages \(messages.map(\.count)) bytes long"
                + (tooLarge ? ", then MessageTooLarge" : "")
        }
    }

    /// `VarlinkFraming` fed the stream in reads of random size through its three ways in (a buffer, a sequence
    /// without contiguous storage, `readIntoFreeSpace`) and drained at random moments through both ways out yields
    /// exactly the `FramingOutcome` of the stream; after `MessageTooLarge` every call fails the same; otherwise the
    /// unterminated tail stays buffered; after `reset()` the same stream in one read yields the same again.
    static func checkFraming(_ bytes: [UInt8]) throws(Violation) {
        guard let input = FramingInput(bytes) else { return }
        let expected = FramingOutcome.expected(stream: input.stream, limit: input.limit)
        var random = SplitMix64(seed: input.seed)
        var framing = VarlinkFraming(maximumMessageSize: input.limit, initialCapacity: Int(random.next() % 128))
        var outcome = FramingOutcome(messages: [], tooLarge: false)
        var offset = 0
        while offset < input.stream.count {
            let count = min(input.stream.count - offset, 1 + Int(random.next() % 48))
            let chunk = input.stream[offset..<(offset + count)]
            offset += count
            switch random.next() % 3 {
            case 0: chunk.withUnsafeBytes { framing.append($0) }
            case 1: framing.append(contentsOf: chunk.lazy.map { $0 })
            default:
                let written = framing.readIntoFreeSpace(minimumFreeSpace: count) { free in
                    guard free.count >= count else { return 0 }
                    free.copyBytes(from: chunk)
                    return count
                }
                guard written == count else {
                    throw Violation("readIntoFreeSpace(minimumFreeSpace: \(count)) offered less than \(count) bytes")
                }
            }
            if random.next() % 4 != 0 { try drain(&framing, into: &outcome, limit: input.limit, random: &random) }
        }
        try drain(&framing, into: &outcome, limit: input.limit, random: &random)
        guard outcome == expected else {
            throw Violation("VarlinkFraming delivered \(outcome); the stream holds \(expected)")
        }
        if outcome.tooLarge {
            let laterCalls: [Result<Void, any Error>] = [
                Result { _ = try framing.nextMessage() }, Result { _ = try framing.withNextMessage { _ in () } },
            ]
            for case .success in laterCalls {
                throw Violation("after MessageTooLarge a later call returned instead of failing again")
            }
        } else if framing.bufferedByteCount != FramingOutcome.remainder(of: input.stream) {
            throw Violation(
                "\(framing.bufferedByteCount) bytes buffered; the unterminated tail is "
                    + "\(FramingOutcome.remainder(of: input.stream))")
        }

        framing.reset()
        framing.append(contentsOf: input.stream)
        var again = FramingOutcome(messages: [], tooLarge: false)
        var plain = SplitMix64(seed: 0)
        try drain(&framing, into: &again, limit: input.limit, random: &plain)
        guard again == expected else {
            throw Violation("after reset(), the stream in one read delivered \(again); it holds \(expected)")
        }
    }

    /// Takes every complete message out of `framing`, through `nextMessage()` or `withNextMessage` at random, and
    /// notes a `MessageTooLarge`; any other error, or a message with a NUL or over the limit, is a violation.
    private static func drain(
        _ framing: inout VarlinkFraming,
        into outcome: inout FramingOutcome,
        limit: Int,
        random: inout SplitMix64
    ) throws(Violation) {
        while !outcome.tooLarge {
            let message: [UInt8]?
            do {
                if random.next() % 2 == 0 {
                    message = try framing.nextMessage().map { [UInt8]($0) }
                } else {
                    message = try framing.withNextMessage { [UInt8]($0) }
                }
            } catch let error as VarlinkError where error == .messageTooLarge(limit: limit) {
                outcome.tooLarge = true
                return
            } catch {
                throw Violation("VarlinkFraming failed with \(error), not MessageTooLarge(limit: \(limit))")
            }
            guard let message else { return }
            if message.contains(0) { throw Violation("a delivered message contains a NUL byte") }
            if message.count > limit { throw Violation("a delivered message is \(message.count) bytes, over \(limit)") }
            outcome.messages.append(message)
        }
    }

    // MARK: - json-envelope

    /// `JSONEnvelopeScanner` against Foundation's full parse of the same bytes.
    ///
    /// Its promises (see its doc comment): it accepts exactly the RFC 8259 texts that are one object, says "not an
    /// object" only of valid JSON of another kind, nests at most as deep as Foundation does, and reports each
    /// top-level member with the byte ranges of its key and value and the kind of its value. Foundation is the
    /// reference, with the differences either side documents: Foundation also accepts a trailing comma, a leading
    /// byte order mark and UTF-16 or UTF-32 text (the scanner keeps to the RFC and to UTF-8), and refuses text the
    /// scanner leaves to the decoders that read strings and numbers later (invalid UTF-8, unpaired surrogate
    /// escapes, numbers out of `Double`'s range).
    static func checkEnvelopeScanner(_ bytes: [UInt8]) throws(Violation) {
        var members: [JSONEnvelopeScanner.Member] = []
        let failure: JSONEnvelopeScanner.Failure? = bytes.withUnsafeBytes { buffer in
            do throws(JSONEnvelopeScanner.Failure) {
                try JSONEnvelopeScanner.scanObject(buffer) { member throws(JSONEnvelopeScanner.Failure) in
                    members.append(member)
                }
                return nil
            } catch {
                return error
            }
        }
        let data = Data(bytes)
        let reference = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])

        if let failure {
            guard (0...bytes.count).contains(failure.offset), !failure.reason.isEmpty else {
                throw Violation("a refusal at offset \(failure.offset) of \(bytes.count) bytes: '\(failure.reason)'")
            }
            if failure.isNotAnObject {
                guard reference != nil || escapesTheReference(bytes) else {
                    throw Violation(
                        "the scanner calls the text valid JSON that is not an object; Foundation refuses it")
                }
                if reference is [String: Any] {
                    throw Violation("the scanner calls the text not an object; Foundation reads an object")
                }
            } else if reference != nil, !isFoundationLeniency(bytes, at: failure.offset) {
                throw Violation(
                    "the scanner refuses text Foundation reads: \(failure.reason) at byte \(failure.offset)")
            }
            return
        }

        guard let reference else {
            if escapesTheReference(bytes) { return }
            throw Violation("the scanner accepts text Foundation refuses")
        }
        guard reference is [String: Any] else {
            throw Violation("the scanner accepts a JSON value that is not an object")
        }
        try checkMembers(members, of: bytes)
    }

    /// Each member's ranges lie in order inside the text, the key's range sits between quotes, the flags and kinds
    /// agree with the bytes, each value is the one Foundation reads from its range, and, when no key repeats, the
    /// members are the object Foundation reads. (RFC 8259 leaves a repeated key's meaning open, and Foundation's
    /// decoder and JSONSerialization do not even agree on which one wins: the decoder keeps the first and never
    /// reads the others, so a later one may even hold a number Foundation would refuse.)
    private static func checkMembers(_ members: [JSONEnvelopeScanner.Member], of bytes: [UInt8]) throws(Violation) {
        // Foundation's reading of the values, when the text is shallow enough to decode as `JSONValue` in reasonable
        // time (see `valueCheckDepth`); otherwise only the ranges and flags are checked.
        let whole =
            nestingDepth(bytes) <= valueCheckDepth
            ? try? JSONDecoder().decode([String: JSONValue].self, from: Data(bytes)) : nil
        let keys = members.map { member in
            let quoted = Data(bytes[(member.key.lowerBound - 1)...member.key.upperBound])
            return try? JSONDecoder().decode(String.self, from: quoted)
        }
        let keyCounts = Dictionary(keys.map { ($0 ?? "\u{FFFD}", 1) }, uniquingKeysWith: +)
        var previousEnd = 0
        var decoded: [String: JSONValue] = [:]
        for (member, key) in zip(members, keys) {
            guard member.key.lowerBound >= 1, member.key.upperBound < member.value.lowerBound,
                member.key.lowerBound - 1 >= previousEnd, member.value.upperBound <= bytes.count,
                !member.value.isEmpty
            else { throw Violation("member ranges out of order: key \(member.key), value \(member.value)") }
            previousEnd = member.value.upperBound
            guard bytes[member.key.lowerBound - 1] == UInt8(ascii: "\""),
                bytes[member.key.upperBound] == UInt8(ascii: "\"")
            else { throw Violation("the key range \(member.key) is not between quotes") }
            if member.keyHasEscapes != bytes[member.key].contains(UInt8(ascii: "\\")) {
                throw Violation("keyHasEscapes is \(member.keyHasEscapes) for the key at \(member.key)")
            }
            let valueText = Data(bytes[member.value])
            if case .string(let hasEscapes) = member.kind, hasEscapes != valueText.contains(UInt8(ascii: "\\")) {
                throw Violation("hasEscapes is \(hasEscapes) for the string at \(member.value)")
            }
            guard whole != nil else { continue }
            guard let key else { throw Violation("the key at \(member.key) does not decode, yet Foundation reads it") }
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: valueText) else {
                // Foundation read the whole text, so it reads each part of it, except a repeated key it skipped.
                if keyCounts[key, default: 0] > 1 { continue }
                throw Violation("the member at byte \(member.key.lowerBound) does not decode on its own: wrong ranges")
            }
            let kindMatches: Bool
            switch (member.kind, value) {
            case (.object, .object), (.array, .array), (.number, .number), (.null, .null), (.string, .string):
                kindMatches = true
            case (.bool(let flag), .bool(let other)): kindMatches = flag == other
            default: kindMatches = false
            }
            guard kindMatches else {
                throw Violation("member '\(key)' has kind \(member.kind) but its value is \(value)")
            }
            decoded[key] = value
        }
        if let whole, keyCounts.values.allSatisfy({ $0 == 1 }), whole != decoded {
            throw Violation(
                "the members \(JSONValue.object(decoded)) are not the object Foundation reads, "
                    + "\(JSONValue.object(whole))")
        }
    }

    /// The text holds something Foundation refuses and the scanner, by its own contract, leaves to the decoders that
    /// read strings and numbers: invalid UTF-8, a surrogate escape (`\uD800`–`\uDFFF`; paired ones are let through
    /// too, which only makes the check a little weaker), or a number with three or more exponent digits or hundreds
    /// of digits (which may be out of `Double`'s range). Found from the bytes, not from Foundation's messages.
    static func escapesTheReference(_ bytes: [UInt8]) -> Bool {
        if String(validating: bytes, as: UTF8.self) == nil { return true }
        var digits = 0
        var exponentDigits: Int?
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "\\"), index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "u"),
                bytes[index + 2] | 0x20 == UInt8(ascii: "d")
            {
                return true
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits += 1
                if let count = exponentDigits { exponentDigits = count + 1 }
                if digits >= 300 || (exponentDigits ?? 0) >= 3 { return true }
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                exponentDigits = 0
            case UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"):
                break
            default:
                digits = 0
                exponentDigits = nil
            }
        }
        return false
    }

    /// Foundation reads three things a Varlink message may not be and the scanner refuses: a comma right before a
    /// closing `]` or `}`, a UTF-8 byte order mark before the text, and text in UTF-16 or UTF-32 (which Foundation
    /// guesses from a byte order mark or a NUL in the first two bytes; Varlink is UTF-8). True when the scanner's
    /// refusal at `offset` is one of them.
    static func isFoundationLeniency(_ bytes: [UInt8], at offset: Int) -> Bool {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]), offset <= 3 { return true }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.prefix(2).contains(0) {
            return true
        }
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "]") || bytes[offset] == UInt8(ascii: "}") else {
            return false
        }
        let before = bytes[..<offset].last { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return before == UInt8(ascii: ",")
    }

    /// Whether `JSONEnvelopeScanner` accepts `bytes` as one JSON object.
    static func scannerAccepts(_ bytes: UnsafeRawBufferPointer) -> Bool {
        do throws(JSONEnvelopeScanner.Failure) {
            try JSONEnvelopeScanner.scanObject(bytes) {
                (_: JSONEnvelopeScanner.Member) throws(JSONEnvelopeScanner.Failure) in
            }
            return true
        } catch {
            return false
        }
    }

    /// The top-level members the scanner finds, keys decoded as the codec decodes them (nil for a key whose escapes
    /// do not decode), kinds as scanned; empty when it refuses the text.
    static func scannedMembers(_ bytes: [UInt8]) -> [(key: String?, kind: JSONEnvelopeScanner.Kind)] {
        var members: [(key: String?, kind: JSONEnvelopeScanner.Kind)] = []
        bytes.withUnsafeBytes { buffer in
            do throws(JSONEnvelopeScanner.Failure) {
                try JSONEnvelopeScanner.scanObject(buffer) { member throws(JSONEnvelopeScanner.Failure) in
                    let quoted = Data(buffer[(member.key.lowerBound - 1)...member.key.upperBound])
                    members.append((try? JSONDecoder().decode(String.self, from: quoted), member.kind))
                }
            } catch {
                members = []
            }
        }
        return members
    }

    /// No two top-level members have the same key. Where two do, RFC 8259 leaves the meaning open, and the codec
    /// may refuse a call that Foundation (keeping the last) would read.
    static func hasUniqueKeys(_ members: [(key: String?, kind: JSONEnvelopeScanner.Kind)]) -> Bool {
        let keys = members.map { $0.key ?? "\u{FFFD}" }
        return Set(keys).count == keys.count
    }

    // MARK: - varlink-codec

    /// `VarlinkCodec` and `JSONValue` on any message: each refusal is the documented error, each accepted message
    /// agrees with Foundation's reading of it, and whatever is decoded encodes back to a message that decodes to the
    /// same thing (round trip).
    static func checkCodec(_ bytes: [UInt8]) throws(Violation) {
        let message = Data(bytes)
        let shallow = nestingDepth(bytes) <= valueCheckDepth
        // Foundation's reading of the whole text as a reference; nil when Foundation refuses it.
        let reference = shallow ? (try? JSONDecoder().decode(JSONValue.self, from: message)) : nil
        try checkCall(message, bytes, reference: reference, shallow: shallow)
        if shallow { try checkReply(message, bytes, reference: reference) }
        if let reference { try checkJSONValueRoundTrip(reference) }
    }

    /// Values nested deeper than this are not decoded as `JSONValue` by the checks. Decoding JSON into `JSONValue`
    /// costs time in proportion to the number of values times their depth (each `try?` in its `init(from:)` that
    /// fails builds an error holding the whole coding path), about 8 s for 10,000 numbers 400 levels deep; the
    /// fuzzer finds such inputs at once and would then spend its time there. RELIABILITY.md records this as a finding.
    static let valueCheckDepth = 32

    /// How deeply arrays and objects nest in `bytes`, brackets inside strings not counted.
    static func nestingDepth(_ bytes: [UInt8]) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// A call is refused with `MalformedMessage` and a reason, and only when it is not a call; an accepted call has
    /// Foundation's method and flags, its parameters decode as `JSONValue` (or are refused with `InvalidParameter`
    /// naming one), and re-encoding gives the same call. The real interfaces' parameter types decode or name the
    /// parameter that is wrong.
    private static func checkCall(
        _ message: Data,
        _ bytes: [UInt8],
        reference: JSONValue?,
        shallow: Bool
    ) throws(Violation) {
        let call: VarlinkReceivedCall
        do {
            call = try VarlinkCodec.decodeCall(message)
        } catch {
            guard error.name == VarlinkError.Name.malformedMessage, let reason = error.stringParameter("reason"),
                !reason.isEmpty
            else { throw Violation("a refused call answered \(error), not MalformedMessage with a reason") }
            if case .object(let object)? = reference, case .string? = object["method"],
                ["more", "oneway", "upgrade"].allSatisfy({
                    object[$0] == nil || object[$0] == .null || object[$0]?.boolValue != nil
                }),
                message.withUnsafeBytes({ scannerAccepts($0) }), hasUniqueKeys(scannedMembers(bytes))
            {
                throw Violation("a valid call was refused: \(reason)")
            }
            if reason.contains("no \"method\" field"),
                scannedMembers(bytes).contains(where: { $0.key == "method" })
            {
                throw Violation("a call with a \"method\" member was refused as having none")
            }
            return
        }
        let header = call.header
        // With a repeated key the codec keeps the last and Foundation's decoder the first; neither is wrong.
        let uniqueKeys = hasUniqueKeys(scannedMembers(bytes))
        if case .object(let object)? = reference, uniqueKeys {
            let expected = VarlinkCallHeader(
                method: object["method"]?.stringValue ?? "<none>", more: object["more"]?.boolValue ?? false,
                oneway: object["oneway"]?.boolValue ?? false, upgrade: object["upgrade"]?.boolValue ?? false)
            guard header == expected else { throw Violation("decoded \(header); Foundation reads \(expected)") }
        }

        // Too deep to decode as `JSONValue` in reasonable time (see `valueCheckDepth`); the typed decoders still run.
        if !shallow {
            try checkTypedParameters(call)
            return
        }
        let parameters: JSONValue
        do {
            parameters = try call.decodeParameters(as: JSONValue.self)
        } catch {
            // `JSONValue` takes any shape, so the failure is in a value that is there: the parameter named must be
            // one of the top-level members (whose key may be the empty string) or the parameters as a whole.
            let start = call.message.startIndex
            let parametersText = call.parameters.map { range in
                [UInt8](call.message[(start + range.lowerBound)..<(start + range.upperBound)])
            }
            let present = Set(scannedMembers(parametersText ?? []).compactMap(\.key) + ["parameters"])
            try checkInvalidParameter(error, decoding: "JSONValue", naming: present)
            return
        }
        if case .object(let object)? = reference, uniqueKeys {
            // Absent or null parameters read as {}. (Spelled out: `nil` in a closure returning `JSONValue?` would be
            // the literal JSON null.)
            var expected = JSONValue.object([:])
            if let given = object["parameters"], given != .null { expected = given }
            guard parameters == expected else {
                throw Violation("parameters \(parameters); Foundation reads \(expected)")
            }
        }
        do {
            let encoded = try VarlinkCodec.encodeCall(
                header.method, parameters, more: header.more, oneway: header.oneway)
            let again = try VarlinkCodec.decodeCall(encoded)
            let expected = VarlinkCallHeader(method: header.method, more: header.more, oneway: header.oneway)
            guard again.header == expected, try again.decodeParameters(as: JSONValue.self) == parameters else {
                throw Violation(
                    "the call re-encoded as \(String(decoding: encoded, as: UTF8.self)) decodes differently")
            }
        } catch let violation as Violation {
            throw violation
        } catch {
            throw Violation("the decoded call does not encode and decode again: \(error)")
        }

        try checkTypedParameters(call)
    }

    /// The parameters decoded as three of the real interfaces' parameter types.
    private static func checkTypedParameters(_ call: VarlinkReceivedCall) throws(Violation) {
        try checkTyped(call, as: AppInterface.AttachParameters.self)
        try checkTyped(call, as: AppInterface.BeginParameters.self)
        try checkTyped(call, as: ControlInterface.InstallParameters.self)
        try checkSameAsFoundation(call, as: AppInterface.BeginParameters.self)
        try checkSameAsFoundation(call, as: AppInterface.EndParameters.self)
        try checkSameAsFoundation(call, as: AppInterface.CallbackDoneParameters.self)
        try checkSameAsFoundation(call, as: AppInterface.AttachReply.self)
    }

    /// Types read by hand (`WireDecodable`) decide exactly as Foundation's decoder does: the same value, or a
    /// refusal both ways.
    private static func checkSameAsFoundation<P: Decodable & Equatable>(_ call: VarlinkReceivedCall, as type: P.Type)
        throws(Violation)
    {
        let text = call.parameters.map { call.message[(call.message.startIndex + $0.lowerBound)..<(call.message.startIndex + $0.upperBound)] }
            ?? VarlinkCodec.emptyObject
        let ours = try? VarlinkCodec.decodeParameters(P.self, from: text)
        let foundation = try? JSONDecoder().decode(P.self, from: text)
        guard ours == foundation else {
            throw Violation("\(P.self) read by hand as \(String(describing: ours)), by Foundation as \(String(describing: foundation))")
        }
    }

    /// The parameters decode as a `P` that encodes and decodes back to itself, or are refused with an
    /// `InvalidParameter` that names the parameter and says what is wrong.
    private static func checkTyped<P: Codable & Equatable>(_ call: VarlinkReceivedCall, as type: P.Type)
        throws(Violation)
    {
        let value: P
        do {
            value = try call.decodeParameters(as: P.self)
        } catch {
            try checkInvalidParameter(error, decoding: "\(P.self)")
            return
        }
        do {
            let again = try VarlinkCodec.decodeCallParameters(
                VarlinkCodec.encodeCall(call.header.method, value), as: P.self)
            guard again == value else { throw Violation("\(P.self) changed in a round trip: \(value) → \(again)") }
        } catch let violation as Violation {
            throw violation
        } catch {
            throw Violation("decoded \(P.self) does not encode and decode again: \(error)")
        }
    }

    /// The error is `InvalidParameter` with a description, naming one of `parameters` when given, else a non-empty
    /// name (a typed decoder may name a member that is missing).
    private static func checkInvalidParameter(
        _ error: VarlinkError,
        decoding type: String,
        naming parameters: Set<String>? = nil
    ) throws(Violation) {
        guard error.name == VarlinkError.Name.invalidParameter, let parameter = error.stringParameter("parameter"),
            parameters?.contains(parameter) ?? !parameter.isEmpty,
            let description = error.stringParameter("description"), !description.isEmpty
        else { throw Violation("decoding \(type) failed with \(error), not InvalidParameter naming a parameter") }
    }

    /// A reply decodes, or is refused with a `DecodingError`; an error reply carries the `error` member's name
    /// (and a message with a string `error` member is always an error reply); decoded replies and errors encode
    /// back to messages that decode to the same.
    private static func checkReply(_ message: Data, _ bytes: [UInt8], reference: JSONValue?) throws(Violation) {
        let reply: VarlinkReplyMessage<JSONValue>
        do {
            reply = try VarlinkCodec.decodeReply(message, as: JSONValue.self)
        } catch is DecodingError {
            return
        } catch {
            throw Violation("a refused reply threw \(error), not a DecodingError")
        }
        let hasErrorName = scannedMembers(bytes).contains { $0.key == "error" }
        switch reply {
        case .error(let error):
            if case .object(let object)? = reference, hasUniqueKeys(scannedMembers(bytes)),
                object["error"]?.stringValue != error.name
            {
                throw Violation("error reply named '\(error.name)'; Foundation reads \(object["error"] ?? .null)")
            }
            let encoded = VarlinkCodec.encodeError(error)
            guard case .error(let again)? = try? VarlinkCodec.decodeReply(encoded, as: JSONValue.self), again == error
            else {
                throw Violation(
                    "the error \(error) re-encoded as \(String(decoding: encoded, as: UTF8.self)) reads differently")
            }
        case .reply(let parameters, let continues):
            if hasErrorName { throw Violation("a message with an \"error\" member was read as a successful reply") }
            guard let encoded = try? VarlinkCodec.encodeReply(parameters, continues: continues),
                case .reply(let again, let continuesAgain)? = try? VarlinkCodec.decodeReply(
                    encoded, as: JSONValue.self),
                again == parameters, continuesAgain == continues
            else { throw Violation("the reply \(parameters) does not encode and decode to itself") }
        }
    }

    /// Any value Foundation reads prints (`description`) and encodes (`JSONEncoder`) as JSON that reads back equal.
    private static func checkJSONValueRoundTrip(_ value: JSONValue) throws(Violation) {
        let printed = Data(value.description.utf8)
        guard let fromText = try? JSONDecoder().decode(JSONValue.self, from: printed), fromText == value else {
            throw Violation("JSONValue.description \(value.description) does not read back as the same value")
        }
        guard let encoded = try? JSONEncoder().encode(value),
            let fromEncoder = try? JSONDecoder().decode(JSONValue.self, from: encoded), fromEncoder == value
        else { throw Violation("JSONValue \(value.description) does not encode and decode back to itself") }
    }
}

/// A small, fast, seedable random number generator (SplitMix64), so that a fuzz input means the same run on every
/// machine and in every replay.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
