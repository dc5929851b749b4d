import Foundation
import OffstageProtocol
import Testing

/// Every method of every interface the daemon serves, read from the definitions it serves, called with each hostile
/// value in each of its fields (nested ones too): NaN, ±Infinity, ±1e308, the least and greatest 64-bit integers, a
/// date in year 1 and one in year 10000; and once per method with a 10 MB string. Each call must get a declared
/// error (or, for a method that only reads, an answer), the daemon must go on answering, and what a user can see of
/// its state — apps, settings, device, tasks, modes, notifications, push, transfers — must be as before (SPEC §11:
/// malformed input on every interface gets a clear error and changes nothing).
@Suite("Every interface method against hostile values (SPEC §11)", .serialized)
struct InterfaceSweepTests {
    static let app = "com.example.sweep"
    static let permitted = "com.example.sweep.refresh"

    /// The values put in each field, as JSON text (NaN and the infinities are not JSON: a client may send them anyway).
    static let hostile = [
        "NaN", "Infinity", "-Infinity", "1e308", "-1e308", "-9223372036854775808", "9223372036854775807",
        "-62135596800", "253402300800",
    ]

    /// Methods whose answer to a call they accept changes nothing: reading, listing, explaining.
    static let readers: Set<String> = [
        "io.offstage.Control.ListApps", "io.offstage.Control.GetSettings", "io.offstage.Control.Log",
        "io.offstage.Control.Status", "io.offstage.Control.Metrics", "io.offstage.Control.GetDevice",
        "io.offstage.Control.Tasks", "io.offstage.Control.Explain", "io.offstage.Control.ExplainHistory",
        "io.offstage.ModesControl.AudioSessions", "io.offstage.ModesControl.VoIPApps",
        "io.offstage.ModesControl.Location", "io.offstage.ModesControl.Accessories",
        "io.offstage.NotificationsControl.Notifications", "io.offstage.PushControl.Status", "io.offstage.PushControl.Keys",
        "io.offstage.PushControl.Token", "io.offstage.TransfersControl.List", "io.offstage.App.BackgroundTimeRemaining",
        "io.offstage.App.GetDevice", "io.offstage.App.PendingTasks", "io.offstage.Modes.Accessories",
        "io.offstage.Notifications.Pending", "io.offstage.Notifications.Delivered", "io.offstage.Notifications.Settings",
        "io.offstage.Transfers.Tasks",
    ]

    /// Methods that accept a number that names nothing, by design, and change nothing: the answer says so.
    static let harmless: [String: String] = [
        "io.offstage.App.EndBackgroundTask": "SPEC BT-1: ending an unknown identifier is harmless and logged (ended: false)",
        "io.offstage.App.CallbackDone": "an answer after the callback's deadline is a race the app cannot avoid; logged",
    ]

    /// The reads whose answers make up the state a call must not change, and the members that move by themselves.
    static let snapshot = [
        "io.offstage.Control.ListApps", "io.offstage.Control.GetSettings", "io.offstage.Control.Tasks",
        "io.offstage.ModesControl.AudioSessions", "io.offstage.ModesControl.VoIPApps", "io.offstage.ModesControl.Location",
        "io.offstage.ModesControl.Accessories", "io.offstage.NotificationsControl.Notifications",
        "io.offstage.PushControl.Status", "io.offstage.PushControl.Keys", "io.offstage.TransfersControl.List",
    ]
    static let moving: Set<String> = ["backgroundTimeRemaining", "machine", "at", "status"]

    @Test("§11: every method, every field, every hostile value: a declared error, a live daemon, nothing changed")
    func everyMethodEveryField() throws {
        try withDaemon { daemon in
            try daemon.install(
                "FiniteTask", id: Self.app,
                [
                    "UIBackgroundModes": [
                        "audio", "location", "voip", "fetch", "remote-notification", "processing", "external-accessory",
                        "newsstand-content",
                    ],
                    "BGTaskSchedulerPermittedIdentifiers": [Self.permitted],
                ])
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            let appSide = try AppSideClient(daemon, app: Self.app)
            defer { appSide.close() }
            let user = { (raw: String) throws -> String? in
                let client = try RawClient(path: daemon.socket, timeout: 5)
                defer { client.close() }
                client.send(raw)
                return client.receive().flatMap { try? JSONSerialization.data(withJSONObject: $0) }
                    .map { String(decoding: $0, as: UTF8.self) }
            }
            var problems: [String] = []
            var calls = 0
            for schema in try Self.schemas(daemon) {
                let call = schema.name.hasSuffix("Control") ? user : { try appSide.call(raw: $0) }
                for method in schema.methods {
                    let qualified = "\(schema.name).\(method.name)"
                    let before = try Self.state(daemon)
                    var messages = Self.paths(schema, method.input).flatMap { path in
                        Self.hostile.map { value in (path.joined(separator: "."), value, Self.message(qualified, schema, method.input, path, .token(value))) }
                    }
                    let big = RawJSON.token(#"""# + String(repeating: "x", count: 10 << 20) + #"""#)
                    let first = method.input.first.map { [$0.name] } ?? ["junk"]
                    messages.append((first[0], "a 10 MB string", Self.message(qualified, schema, method.input, first, big)))
                    for (field, value, raw) in messages {
                        calls += 1
                        guard let reply = try? call(raw) else {
                            let log = daemon.daemonOutput.split(separator: "\n").suffix(30).joined(separator: "\n")
                            Issue.record("no answer to \(qualified) with \(field)=\(value.prefix(24)); the daemon's output:\n\(log)")
                            return
                        }
                        if let problem = Self.judge(reply, qualified, schema) {
                            problems.append("\(qualified) \(field)=\(value.prefix(24)): \(problem)")
                        }
                    }
                    guard daemon.daemon?.isRunning == true, try user(#"{"method":"io.offstage.Control.Status"}"#) != nil else {
                        Issue.record("the daemon stopped answering after \(qualified)")
                        return
                    }
                    let after = try Self.state(daemon)
                    if after != before { problems.append("\(qualified) changed the state:\n  before \(before)\n  after  \(after)") }
                }
            }
            #expect(calls > 1_000, "the sweep made \(calls) calls")
            #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
        }
    }

    // MARK: Building calls

    /// A JSON value as text, with any token (NaN included) at the leaves.
    indirect enum RawJSON {
        case token(String)
        case object([(String, RawJSON)])
        case array([RawJSON])

        var text: String {
            switch self {
            case .token(let token): token
            case .object(let members): "{" + members.map { "\"\($0.0)\":\($0.1.text)" }.joined(separator: ",") + "}"
            case .array(let elements): "[" + elements.map(\.text).joined(separator: ",") + "]"
            }
        }
    }

    /// The call with the base value of every required field and `value` at `path` (an array's element is "0").
    static func message(
        _ method: String, _ schema: IDLSchema, _ input: [IDLSchema.Field], _ path: [String], _ value: RawJSON
    ) -> String {
        let parameters = fill(schema, input, path: path[...], value: value)
        return RawJSON.object([("method", .token("\"\(method)\"")), ("parameters", parameters)]).text
    }

    private static func fill(_ schema: IDLSchema, _ fields: [IDLSchema.Field], path: ArraySlice<String>, value: RawJSON) -> RawJSON {
        var members: [(String, RawJSON)] = []
        for field in fields {
            if field.name == path.first {
                members.append((field.name, place(schema, field.kind, path: path.dropFirst(), value: value)))
            } else if let base = base(schema, field.kind, name: field.name) {
                members.append((field.name, base))
            }
        }
        if let name = path.first, !fields.contains(where: { $0.name == name }) { members.append((name, value)) }
        return .object(members)
    }

    private static func place(_ schema: IDLSchema, _ kind: IDLSchema.Kind, path: ArraySlice<String>, value: RawJSON) -> RawJSON {
        guard !path.isEmpty else { return value }
        switch schema.resolved(kind) {
        case .optional(let inner): return place(schema, inner, path: path, value: value)
        case .array(let element): return .array([place(schema, element, path: path.dropFirst(), value: value)])
        case .map(let element): return .object([("key", place(schema, element, path: path.dropFirst(), value: value))])
        case .structure(let fields): return fill(schema, fields, path: path, value: value)
        default: return value
        }
    }

    /// A plausible value for a required field (nil for an optional one, which is left out).
    private static func base(_ schema: IDLSchema, _ kind: IDLSchema.Kind, name: String) -> RawJSON? {
        switch schema.resolved(kind) {
        case .optional: return nil
        case .bool: return .token("false")
        case .int: return .token("1")
        case .float: return .token("1")
        case .object, .map: return .object([])
        case .array: return .array([])
        case .enumeration(let cases): return .token("\"\(cases[0])\"")
        case .structure(let fields): return fill(schema, fields, path: [], value: .token("null"))
        case .named(let unknown): return .token("\"\(unknown)\"")
        case .string:
            let plausible = [
                "app": app, "id": app, "identifier": permitted, "kind": "refresh", "url": "http://127.0.0.1:9/file",
                "path": "/nonexistent", "change": "cancel", "result": "noData", "interval": "never", "session": "s",
                "name": "n", "mode": "stream", "event": "data", "title": "t", "method": "GET",
            ]
            return .token("\"\(plausible[name] ?? "x")\"")
        }
    }

    /// Every field a value can be put in: each input field, and inside structs, arrays and maps, to a depth of five.
    static func paths(_ schema: IDLSchema, _ fields: [IDLSchema.Field], depth: Int = 0) -> [[String]] {
        guard depth < 5 else { return [] }
        return fields.flatMap { field in
            [[field.name]] + inner(schema, field.kind, depth: depth).map { [field.name] + $0 }
        }
    }

    private static func inner(_ schema: IDLSchema, _ kind: IDLSchema.Kind, depth: Int) -> [[String]] {
        switch schema.resolved(kind) {
        case .optional(let wrapped): return inner(schema, wrapped, depth: depth)
        case .array(let element), .map(let element):
            return [["0"]] + inner(schema, element, depth: depth + 1).map { ["0"] + $0 }
        case .structure(let fields): return paths(schema, fields, depth: depth + 1)
        default: return []
        }
    }

    // MARK: Judging

    /// Nil when the reply is acceptable: an error the interface declares (or a protocol error), or an answer from a
    /// method that only reads; otherwise what is wrong with it.
    static func judge(_ reply: String?, _ method: String, _ schema: IDLSchema) -> String? {
        guard let reply else { return "no reply" }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
            return "a reply that is not a JSON object: \(reply.prefix(200))"
        }
        guard let error = object["error"] as? String else {
            return readers.contains(method) || harmless[method] != nil ? nil : "accepted: \(reply.prefix(300))"
        }
        if error.hasPrefix("org.varlink.service.") || error.hasPrefix("io.offstage.Protocol.") { return nil }
        let local = error.hasPrefix(schema.name + ".") ? String(error.dropFirst(schema.name.count + 1)) : nil
        guard let local, schema.errors.contains(local) else { return "an undeclared error: \(reply.prefix(300))" }
        return nil
    }

    // MARK: The daemon

    /// The interface definitions the daemon serves (the org.varlink.service one aside).
    static func schemas(_ daemon: DaemonHarness) throws -> [IDLSchema] {
        let client = try RawClient(path: daemon.socket)
        defer { client.close() }
        let info = try client.call("org.varlink.service.GetInfo")
        let names = ((info["parameters"] as? [String: Any])?["interfaces"] as? [String]) ?? []
        #expect(names.count >= 10, "\(info)")
        return try names.filter { $0 != "org.varlink.service" }.map { name in
            let reply = try client.call("org.varlink.service.GetInterfaceDescription", ["interface": name])
            guard let text = (reply["parameters"] as? [String: Any])?["description"] as? String else {
                throw HarnessError("no description of \(name): \(reply)")
            }
            return try IDLSchema(text)
        }
    }

    /// What a user can see of the daemon's state, without the members that move by themselves.
    static func state(_ daemon: DaemonHarness) throws -> String {
        let client = try RawClient(path: daemon.socket)
        defer { client.close() }
        return try snapshot.map { method in
            let reply = try client.call(method)
            let stable = strip(reply["parameters"] ?? reply)
            let data = try JSONSerialization.data(withJSONObject: stable, options: [.sortedKeys])
            return "\(method.split(separator: ".").last!)=\(String(decoding: data, as: UTF8.self))"
        }.joined(separator: " ")
    }

    private static func strip(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            return object.filter { !moving.contains($0.key) }.mapValues(strip)
        }
        if let array = value as? [Any] { return array.map(strip) }
        return value
    }
}
