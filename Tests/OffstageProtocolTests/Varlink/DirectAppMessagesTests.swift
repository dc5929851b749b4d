import Foundation
import OffstageCore
@testable import OffstageProtocol
import Testing

/// The hand-written JSON of the hot messages must mean exactly what Foundation's coders write and read.
@Suite("Hand-written and hand-read JSON of the lifecycle and background-task messages")
struct DirectAppMessagesTests {
    static let texts = ["", "plain", "with \"quotes\" and \\ backslash", "line\nbreak\ttab\u{1}", "naïve 名前 🚀", "a/b"]
    static let doubles: [Double] = [
        0, -0.0, 1, 0.1, 0.1 + 0.2, 1_763_000_005.123, 1e-300, 1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -42.5,
    ]
    static let ids: [UInt64] = [0, 1, 42, 1_763_000_000_123, UInt64.max]

    /// Every conforming message, with values at the edges of what each field holds.
    static func samples() -> [any DirectSample] {
        var samples: [any DirectSample] = [VarlinkEmpty(), NoParameters(), EmptyReply()]
        for text in texts { samples.append(AppInterface.BeginParameters(name: text)) }
        for (id, seconds) in zip(ids, doubles) {
            samples.append(AppInterface.BeginReply(id: id, timeRemaining: seconds))
            samples.append(AppInterface.EndParameters(id: id))
            samples.append(AppInterface.CallbackDoneParameters(id: id))
            samples.append(AppInterface.TimeRemainingReply(seconds: seconds))
        }
        samples.append(AppInterface.EndReply(ended: true))
        samples.append(AppInterface.EndReply(ended: false))
        var generator = SplitMix(seed: 7)
        for _ in 0..<300 { samples.append(AppInterface.AttachReply(callback: randomCallback(&generator))) }
        samples.append(AppInterface.AttachReply())
        return samples
    }

    static func randomCallback(_ generator: inout SplitMix) -> AppInterface.CallbackMessage {
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { generator.next() % 2 == 0 ? value() : nil }
        let kinds = ["willResignActive", "didEnterBackground", "runTask", "backgroundTasksExpiring", "k\"ind"]
        return AppInterface.CallbackMessage(
            id: ids[Int(generator.next() % UInt64(ids.count))], kind: kinds[Int(generator.next() % UInt64(kinds.count))],
            launchReason: maybe(texts[Int(generator.next() % UInt64(texts.count))]),
            taskIds: maybe([generator.next(), 0]), deadline: maybe(doubles[Int(generator.next() % UInt64(doubles.count))]),
            run: maybe(generator.next()), taskIdentifier: maybe("com.example.refresh"), taskKind: maybe("processing"),
            audioInterruption: generator.next() % 8 != 0 ? nil : (
                AudioInterruption(
                    began: generator.next() % 2 == 0, shouldResume: generator.next() % 2 == 0,
                    reason: texts[Int(generator.next() % UInt64(texts.count))])),
            socketClosed: maybe(generator.next() % 2 == 0),
            systemEvent: maybe(SystemEvent.allCases[Int(generator.next() % UInt64(SystemEvent.allCases.count))].rawValue),
            accessory: maybe("scanner-\(generator.next() % 10)"),
            accessoryEvent: maybe(AccessoryEvent.allCases[Int(generator.next() % UInt64(AccessoryEvent.allCases.count))].rawValue))
    }

    @Test("written by hand, read by JSONDecoder: the same value")
    func handWrittenReadsBack() throws {
        for sample in Self.samples() {
            var json = VarlinkDirectJSON()
            try sample.appendJSON(to: &json)
            #expect(try sample.decodedByFoundation(Data(json.bytes)), "\(String(decoding: json.bytes, as: UTF8.self))")
        }
    }

    @Test("written by JSONEncoder, read by hand (or, for escapes and rare members, by Foundation): the same value")
    func foundationTextReadsBack() throws {
        var plain = 0
        for sample in Self.samples() {
            let text = try JSONEncoder().encode(sample)
            let shown = String(decoding: text, as: UTF8.self)
            #expect(try sample.decodedByCodec(text), "\(shown)")
            // Without escapes, task id lists and audio interruptions, the hand reader takes it.
            if !shown.contains("\\") && !shown.contains("taskIds") && !shown.contains("audioInterruption") {
                plain += 1
                #expect(sample.decodedByHand(text), "\(shown)")
            }
        }
        #expect(plain > 100)
    }

    @Test("the hand reader takes the plain forms and leaves everything else to JSONDecoder")
    func handReaderIsStrict() throws {
        func reads(_ text: String) -> AppInterface.EndParameters? {
            Data(text.utf8).withUnsafeBytes { bytes in
                guard let object = try? VarlinkDirectObject(bytes) else { return nil }
                return try? AppInterface.EndParameters(direct: object)
            }
        }
        #expect(reads(#"{"id":7}"#)?.id == 7)
        #expect(reads(#" { "other" : [1, {"x": null}], "id" : 18446744073709551615 } "#)?.id == UInt64.max)
        for text in [
            #"{"id":-1}"#, #"{"id":1.0}"#, #"{"id":1e2}"#, #"{"id":"7"}"#, #"{"id":null}"#, #"{}"#,
            #"{"id":18446744073709551616}"#, #"{"id":1,"id":2}"#, #"{"i\u0064":7}"#, #"[1]"#, #"{"id":7"#,
        ] {
            #expect(reads(text) == nil, "\(text)")
        }
    }

    @Test("bad parameters still get exactly JSONDecoder's InvalidParameter, naming the member")
    func badParametersKeepTheirErrors() throws {
        for parameters in [#"{"id":-1}"#, #"{"id":"seven"}"#, #"{}"#, #"{"id":null}"#, #"{"id":1.5}"#, #"[]"#] {
            let message = Data(#"{"method":"io.offstage.App.EndBackgroundTask","parameters":\#(parameters)}"#.utf8)
            let error = #expect(throws: VarlinkError.self) {
                try VarlinkCodec.decodeCallParameters(message, as: AppInterface.EndParameters.self)
            }
            // What Foundation alone says about the same text.
            let expected = #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(AppInterface.EndParameters.self, from: Data(parameters.utf8))
            }.map(VarlinkCodec.invalidParameter(for:))
            #expect(error?.name == VarlinkError.Name.invalidParameter)
            #expect(error == expected, "\(parameters)")
        }
        let missing = Data(#"{"method":"io.offstage.App.EndBackgroundTask","parameters":{}}"#.utf8)
        let error = #expect(throws: VarlinkError.self) {
            try VarlinkCodec.decodeCallParameters(missing, as: AppInterface.EndParameters.self)
        }
        #expect(error?.parameters["parameter"]?.stringValue == "id")
    }

    @Test("a number JSON cannot hold fails as JSONEncoder fails, instead of writing 'inf'")
    func nonFiniteNumbersFail() {
        for value in [Double.infinity, -.infinity, .nan] {
            #expect(throws: EncodingError.self) {
                try VarlinkCodec.encodeReply(AppInterface.BeginReply(id: 1, timeRemaining: value))
            }
            #expect(throws: EncodingError.self) {
                try VarlinkCodec.encodeReply(
                    AppInterface.AttachReply(callback: .init(id: 1, kind: "didEnterBackground", deadline: value)))
            }
        }
    }

    @Test("replies and calls on the wire carry the hand-written parameters")
    func envelopes() throws {
        let reply = try VarlinkCodec.encodeReply(
            AppInterface.AttachReply(callback: .init(id: 3, kind: "willResignActive", deadline: 5.5)), continues: true)
        #expect(
            String(decoding: reply, as: UTF8.self)
                == #"{"parameters":{"callback":{"id":3,"kind":"willResignActive","deadline":5.5}},"continues":true}"#)
        let call = try VarlinkCodec.encodeCall(AppInterface.Method.callbackDone, AppInterface.CallbackDoneParameters(id: 3))
        #expect(String(decoding: call, as: UTF8.self) == #"{"method":"io.offstage.App.CallbackDone","parameters":{"id":3}}"#)
        let decoded = try VarlinkCodec.decodeReply(reply, as: AppInterface.AttachReply.self)
        #expect(decoded == .reply(.init(callback: .init(id: 3, kind: "willResignActive", deadline: 5.5)), continues: true))
    }
}

/// A conforming message under test.
protocol DirectSample: VarlinkDirectEncodable, VarlinkDirectDecodable, Equatable, Sendable {}

extension DirectSample {
    func decodedByFoundation(_ text: Data) throws -> Bool {
        try JSONDecoder().decode(Self.self, from: text) == self
    }

    func decodedByCodec(_ text: Data) throws -> Bool {
        try VarlinkCodec.decodeParameters(Self.self, from: text) == self
    }

    func decodedByHand(_ text: Data) -> Bool {
        text.withUnsafeBytes { bytes in
            guard let object = try? VarlinkDirectObject(bytes), let value = try? Self(direct: object) else { return false }
            return value == self
        }
    }
}

extension VarlinkEmpty: DirectSample {}
extension NoParameters: DirectSample {}
extension EmptyReply: DirectSample {}
extension AppInterface.BeginParameters: DirectSample {}
extension AppInterface.BeginReply: DirectSample {}
extension AppInterface.EndParameters: DirectSample {}
extension AppInterface.EndReply: DirectSample {}
extension AppInterface.CallbackDoneParameters: DirectSample {}
extension AppInterface.TimeRemainingReply: DirectSample {}
extension AppInterface.AttachReply: DirectSample {}

/// A small seeded generator, so the random messages are the same in every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
