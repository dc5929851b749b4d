import Foundation
import OffstageProtocol
import Synchronization
import Testing

/// `offstage notifications …` against a stand-in for the daemon's `io.offstage.NotificationsControl`: what each verb
/// sends, how it prints the reply, and its errors (SPEC NT-2, CLI-1, CLI-2).
@Suite("offstage notifications (NT-2, CLI-1, CLI-2)", .serialized)
struct NotificationCLITests {
    static let request =
        #"{"identifier":"alarm","content":{"title":"Alarm","body":"Time to wake up","sound":"default","badge":1},"#
        + #""trigger":{"kind":"timeInterval","seconds":60}}"#
    static let reply =
        #"{"parameters":{"pending":[{"app":"com.example.alarm","request":\#(request),"trigger":"in 60 s","#
        + #""addedAt":1795499940,"due":1795500000}],"delivered":[{"app":"com.example.alarm","request":{"#
        + #""identifier":"esc\u001b[31m","content":{"title":"Red\u001b[31m"},"trigger":{"kind":"date","date":1}},"#
        + #""due":1795400000,"deliveredAt":1795400100,"late":true,"route":"user"}],"#
        + #""badges":[{"app":"com.example.alarm","badge":1}],"timeZone":"Europe/Berlin"}}"#

    /// Runs the CLI with `arguments` against a stand-in that answers its one call with `reply`; returns the output
    /// and the call the stand-in read.
    static func run(_ arguments: [String], reply: String) throws -> (DaemonHarness.Output, [String: Any]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-nt-cli-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("fake.sock").path
        let listener = try CLIScaleTests.listen(path)
        defer { close(listener) }
        let call = Mutex(Data())
        let done = DispatchSemaphore(value: 0)
        let served = Thread {
            defer { done.signal() }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) == 1 && byte != 0 { bytes.append(byte) }
            call.withLock { $0 = Data(bytes) }
            let answer = Array(reply.utf8) + [0]
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        served.start()
        let output = try DaemonHarness.Client(socket: path).run(arguments)
        shutdown(listener, Int32(SHUT_RDWR))
        done.wait()
        let read = call.withLock { $0 }
        return (output, (try? JSONSerialization.jsonObject(with: read)) as? [String: Any] ?? [:])
    }

    @Test("CLI-2: notifications lists pending and delivered with badges and the time zone; app text is escaped")
    func list() throws {
        let (output, call) = try Self.run(["notifications", "com.example.alarm"], reply: Self.reply)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(call["method"] as? String == NotificationsControlInterface.Method.notifications)
        #expect((call["parameters"] as? [String: Any])?["app"] as? String == "com.example.alarm")
        let text = output.stdout
        #expect(text.contains("pending (1):") && text.contains("in 60 s") && text.contains("Alarm: Time to wake up"))
        #expect(text.contains("sound default, badge 1"))
        #expect(text.contains("delivered (1):") && text.contains("user, late (due"))
        #expect(text.contains("badges: com.example.alarm 1") && text.contains("time zone: Europe/Berlin"))
        #expect(!text.contains("\u{1B}") && text.contains(#"esc\u{1b}[31m"#), "no terminal escape reaches the screen")
    }

    @Test("CLI-2: notifications --json prints the reply's object: pending, delivered, badges, timeZone")
    func listJSON() throws {
        let (output, _) = try Self.run(["--json", "notifications"], reply: Self.reply)
        #expect(output.status == 0, "\(output.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["pending", "delivered", "badges", "timeZone"])
        let reply = try JSONDecoder().decode(
            NotificationsControlInterface.NotificationsReply.self, from: Data(output.stdout.utf8))
        #expect(reply.pending.first?.request.identifier == "alarm" && reply.delivered.first?.late == true)
    }

    @Test("NT-2: tap sends the app, the identifier and the action, and says what happens")
    func tap() throws {
        let (output, call) = try Self.run(
            ["notifications", "tap", "com.example.alarm", "alarm", "--action", "snooze"], reply: #"{"parameters":{}}"#)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(call["method"] as? String == NotificationsControlInterface.Method.tap)
        let parameters = call["parameters"] as? [String: Any]
        #expect(parameters?["app"] as? String == "com.example.alarm" && parameters?["identifier"] as? String == "alarm")
        #expect(parameters?["action"] as? String == "snooze")
        #expect(output.stdout == "chose 'snooze' on 'alarm' of com.example.alarm: the app hears the response\n")
        let (json, _) = try Self.run(
            ["--json", "notifications", "tap", "com.example.alarm", "alarm"], reply: #"{"parameters":{}}"#)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: String]
        #expect(object == ["app": "com.example.alarm", "identifier": "alarm", "action": "default"])
    }

    @Test("NT-2: clear sends the identifiers and prints how many were removed; --json prints {removed}")
    func clear() throws {
        let arguments = ["notifications", "clear", "com.example.alarm", "--identifier", "a", "--identifier", "b"]
        let (output, call) = try Self.run(arguments, reply: #"{"parameters":{"removed":2}}"#)
        #expect(output.status == 0, "\(output.stderr)")
        #expect((call["parameters"] as? [String: Any])?["identifiers"] as? [String] == ["a", "b"])
        #expect(output.stdout == "removed 2 delivered notifications of com.example.alarm\n")
        let (json, _) = try Self.run(["--json", "notifications", "clear"], reply: #"{"parameters":{"removed":0}}"#)
        #expect(json.stdout.contains(#""removed" : 0"#))
    }

    @Test("CLI-1: a refusal is one line with the fix (no such notification: exit 5); bad usage exits 64")
    func errors() throws {
        let refusal =
            #"{"error":"io.offstage.NotificationsControl.NoSuchNotification","parameters":"#
            + #"{"message":"com.example.alarm has no delivered notification 'x'","fix":"see offstage notifications"}}"#
        let (output, _) = try Self.run(["notifications", "tap", "com.example.alarm", "x"], reply: refusal)
        #expect(output.status == 5)
        #expect(
            output.stderr
                == "offstage: com.example.alarm has no delivered notification 'x'; see offstage notifications\n")
        let client = DaemonHarness.Client(socket: "/nonexistent/offstaged.sock")
        let usage = try client.run(["notifications", "clear", "--identifier", "a"])
        #expect(usage.status == 64 && usage.stderr.contains("--identifier needs APP_ID"))
        let empty = try client.run(["notifications", "tap", "com.example.alarm", ""])
        #expect(empty.status == 64 && empty.stderr.contains("IDENTIFIER is empty"))
        for verb in [["notifications", "list"], ["notifications", "tap"], ["notifications", "clear"]] {
            let help = try client.run(verb + ["--help"])
            #expect(help.status == 0 && help.stdout.contains("--json") && help.stdout.contains("--socket"), "\(verb)")
        }
    }
}
