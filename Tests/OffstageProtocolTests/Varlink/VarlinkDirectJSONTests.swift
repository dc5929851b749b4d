import Foundation
import OffstageCore
import OffstageProtocol
import Testing

/// A reply's envelope, to read its parameters back.
private struct Envelope<Parameters: Decodable>: Decodable { var parameters: Parameters }

/// The replies that write their own JSON (``VarlinkDirectEncodable``) must say exactly what `JSONEncoder` says with
/// their `Encodable` form: the same keys, nulls and absent keys, the same numbers and strings.
@Suite("VarlinkCodec: replies that write their own JSON")
struct VarlinkDirectJSONTests {
    /// Strings a reply may carry: quotes, backslashes, control characters, a slash, non-ASCII text.
    static let awkward = [
        "", "plain", "say \"hi\"", #"back\slash"#, "line\nbreak\ttab\r", "nul \u{0} and \u{1F} and \u{7F}", "a/b",
        "héllo wörld ✓ 🚀", "\u{2028}\u{2029}",
    ]
    /// Numbers: whole, tiny, huge, negative, a wall-clock time with its fraction.
    static let numbers: [Double] = [0, 1, -1.5, 0.1, 1e-7, 1.7976931348623157e308, 1_795_466_514.5698736, 30]

    /// The reply's text through the direct path, and through `JSONEncoder`, both read back as JSON values.
    func both<Reply: VarlinkDirectEncodable>(_ reply: Reply) throws -> (direct: JSONValue, encoder: JSONValue) {
        let direct = try VarlinkCodec.encodeReply(reply)
        var viaEncoder = Data(#"{"parameters":"#.utf8)
        viaEncoder.append(try JSONEncoder().encode(reply))
        viaEncoder.append(contentsOf: "}".utf8)
        return (
            try JSONDecoder().decode(JSONValue.self, from: direct),
            try JSONDecoder().decode(JSONValue.self, from: viaEncoder)
        )
    }

    func expectSame<Reply: VarlinkDirectEncodable & Decodable & Equatable>(_ reply: Reply) throws {
        let (direct, encoder) = try both(reply)
        #expect(direct == encoder)
        // And it reads back as the same value.
        let text = try VarlinkCodec.encodeReply(reply)
        #expect(try JSONDecoder().decode(Envelope<Reply>.self, from: text).parameters == reply)
    }

    func app(_ index: Int) throws -> ControlInterface.App {
        let string = Self.awkward[index % Self.awkward.count]
        let number = Self.numbers[index % Self.numbers.count]
        let set = index % 2 == 0
        let object: [String: Any] = [
            "id": "com.example.\(index)\(string)", "state": set ? "background" : "notRunning",
            "pid": set ? Int32.max - Int32(index) : NSNull(), "backgroundTasks": index,
            "backgroundTimeRemaining": set ? number : NSNull(), "launchReason": set ? string : NSNull(),
            "terminating": set ? NSNull() : string, "forceQuit": set, "lastTermination": set ? string : NSNull(),
            "lastTerminationAt": set ? NSNull() : number, "backgroundModes": set ? ["fetch", string] : [],
            "exitsOnSuspend": !set, "activeModes": set ? ["audio", string] : [],
            "modeHolds": set ? [] : ["audio: playing", string], "suspendedBecause": set ? string : NSNull(),
            "memoryBytes": set ? Int64.max - Int64(index) : NSNull(),
            "memoryBand": set ? string : NSNull(), "memoryEndingRank": set ? Int.max - index : NSNull(), "keptInMemory": set,
            "continuedTasks": (0..<(index % 3)).map { task -> [String: Any] in
                [
                    "identifier": "com.example.export.\(task)", "state": task == 0 ? "running" : "queued", "title": string,
                    "subtitle": set ? string : "", "completed": index * 7, "total": Int64.max - Int64(index),
                    "endedBecause": task == 0 && set ? string : NSNull(),
                ]
            },
        ]
        return try JSONDecoder().decode(ControlInterface.App.self, from: JSONSerialization.data(withJSONObject: object))
    }

    func task(_ index: Int) throws -> ControlInterface.TaskMessage {
        let string = Self.awkward[index % Self.awkward.count]
        let number = Self.numbers[index % Self.numbers.count]
        let set = index % 2 == 1
        let holds: [[String: Any]] = (0..<(index % 3)).map { hold in
            ["controller": "c\(hold)", "reason": string, "until": hold == 0 ? number : NSNull()]
        }
        let object: [String: Any] = [
            "app": "com.example.\(index)", "identifier": string, "kind": "processing", "state": "pending",
            "earliestBegin": set ? number : NSNull(), "requiresNetwork": set, "requiresExternalPower": !set,
            "submittedAt": number, "plannedAt": set ? NSNull() : number, "plannedReason": set ? string : NSNull(),
            "holds": holds, "startedAt": set ? number : NSNull(), "expiresAt": set ? NSNull() : number,
            "forced": index % 3 == 0 ? NSNull() : set, "summary": string,
            // Continued processing (SPEC SCH-11): every field null, or every field set.
            "title": set ? string : NSNull(), "subtitle": set ? string : NSNull(), "completed": set ? index : NSNull(),
            "total": set ? Int64.max : NSNull(), "endedBecause": index % 4 == 1 ? string : NSNull(),
        ]
        return try JSONDecoder().decode(
            ControlInterface.TaskMessage.self, from: JSONSerialization.data(withJSONObject: object))
    }

    @Test("ListApps: every field, null or set, and awkward strings and numbers, as JSONEncoder writes them")
    func apps() throws {
        try expectSame(ControlInterface.AppsReply(apps: []))
        try expectSame(ControlInterface.AppsReply(apps: try (0..<40).map(app)))
    }

    @Test("Tasks: every field, holds with and without an end, as JSONEncoder writes them")
    func tasks() throws {
        try expectSame(ControlInterface.TasksReply(tasks: []))
        try expectSame(ControlInterface.TasksReply(tasks: try (0..<40).map(task)))
    }

    @Test("Log: an absent app or state is left out, as the synthesized encoding does")
    func log() throws {
        let lines = Self.awkward.enumerated().map { index, text in
            ControlInterface.LogLine(
                id: Int64(index) * 1_000_003,
                entry: LogEntry(
                    at: Instant(secondsSinceEpoch: [1, 0.1, 1_795_466_514.5698736, -2.5][index % 4]),
                    app: index % 2 == 0 ? AppID("com.example.app") : nil, kind: .state, message: text,
                    state: index % 3 == 0 ? .background : nil))
        }
        try expectSame(ControlInterface.LogReply(entries: lines))
        let (direct, _) = try both(ControlInterface.LogReply(entries: [lines[1]]))
        #expect(direct == ["parameters": ["entries": [["id": 1_000_003, "at": 0.1, "kind": "state", "message": "plain"]]]])
    }

    @Test("the SDK's begin and end replies")
    func beginEnd() throws {
        for number in Self.numbers {
            try expectSame(AppInterface.BeginReply(id: UInt64.max - 1, timeRemaining: number))
        }
        try expectSame(AppInterface.EndReply(ended: true))
        try expectSame(AppInterface.EndReply(ended: false))
        #expect(try VarlinkCodec.encodeReply(AppInterface.EndReply(ended: true), continues: true)
            == Data(#"{"parameters":{"ended":true},"continues":true}"#.utf8))
    }

    @Test("a number JSON cannot hold is refused, as JSONEncoder refuses it")
    func nonFinite() throws {
        #expect(throws: (any Error).self) { try VarlinkCodec.encodeReply(AppInterface.BeginReply(id: 1, timeRemaining: .infinity)) }
        #expect(throws: (any Error).self) { try VarlinkCodec.encodeReply(AppInterface.BeginReply(id: 1, timeRemaining: .nan)) }
        #expect(throws: (any Error).self) { try JSONEncoder().encode(AppInterface.BeginReply(id: 1, timeRemaining: .nan)) }
    }
}
