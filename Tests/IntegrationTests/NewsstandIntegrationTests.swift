import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// SPEC MODE-5 end to end: the real `Newsstand` example (it declares `newsstand-content`, not `remote-notification`)
/// on the real daemon, a publisher's background push sent with `offstage push` through the daemon's gateway as an app
/// server sends it, and the issue served by a real nginx. The push wakes the suspended app, the issue downloads as a
/// background transfer while the app is suspended again, and the app is woken for the session's events to shelve it.
@Suite("Newsstand on the real daemon (SPEC MODE-5, TR-1, TR-3)", .serialized)
struct NewsstandIntegrationTests {
    static let newsstand = "com.example.newsstand"
    static let session = "com.example.newsstand.issues"

    /// A provider key for the newsstand's topic; the private half in the harness's folder.
    static func addKey(_ daemon: DaemonHarness) throws -> PushIntegrationTests.Key {
        let path = daemon.root.path + "/publisher.p8"
        let id = try daemon.ok("push-keys", "add", "--team-id", "TEAM123456", "--generate", path, "--topic", newsstand)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return PushIntegrationTests.Key(path: path, id: id)
    }

    /// The publisher announces `url`: a background push; returns its apns-id.
    static func announce(_ daemon: DaemonHarness, _ key: PushIntegrationTests.Key, _ url: String) throws -> String {
        let payload = #"{"aps":{"content-available":1},"issue":"\#(url)"}"#
        let output = try daemon.ok(["--json", "push", newsstand, "--payload", payload] + key.arguments)
        let reply = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        #expect(reply?["status"] as? Int == 200, "\(output)")
        return try #require(reply?["apnsId"] as? String, "\(output)")
    }

    @Test("MODE-5, TR-3: a new issue's push wakes the suspended newsstand app, which starts the download; suspended again meanwhile, it is woken for the session's events and shelves the issue, byte-identical, once; a second announcement the same day does not wake it")
    func issueDownloadsInTheBackground() throws {
        let nginx = try TransferIntegrationTests.startNginx()
        defer { nginx.stop() }
        let digest = try TransferIntegrationTests.serve(nginx, "2026-11.pdf", size: 3 << 20)
        try withDaemon { daemon in
            let key = try Self.addKey(daemon)
            // As its bundled Info.plist declares: newsstand-content, not remote-notification.
            try daemon.install("Newsstand", id: Self.newsstand, ["UIBackgroundModes": ["newsstand-content"]])
            try daemon.ok("open", Self.newsstand)
            try daemon.waitUntil("the newsstand registered") { daemon.output(Self.newsstand).contains("registered token=") }
            try daemon.ok("home")
            try daemon.waitFor(Self.newsstand, "suspended")
            let pid = try #require(try daemon.app(Self.newsstand).pid)

            // 3 MiB at 1 MiB/s: the app is suspended again long before the issue is in.
            let id = try Self.announce(daemon, key, nginx.url("/slow/2026-11.pdf"))
            let record = try PushIntegrationTests.record(daemon, id)
            #expect(record.outcome == "handled" && record.detail == "newData", "\(record)")
            #expect(daemon.output(Self.newsstand).contains("issue 2026-11.pdf announced by push \(id): download started"))
            #expect(try daemon.log(Self.newsstand).contains { $0.message.contains("a new issue for the newsstand app") })
            try daemon.waitFor(Self.newsstand, "suspended", timeout: 5)
            #expect(ProcessProbe.isFrozen(pid), "suspended while the daemon downloads")

            try daemon.waitUntil("the app shelved the issue", timeout: 30) {
                try daemon.log(Self.newsstand).contains { $0.message.contains("events of session '\(Self.session)' handled after") }
            }
            let shelved = daemon.stateDirectory + "/data/\(Self.newsstand)/Issues/2026-11.pdf"
            #expect(try TransferIntegrationTests.sha256(ofFile: shelved) == digest, "byte-identical")
            let log = (try? String(contentsOfFile: daemon.stateDirectory + "/data/\(Self.newsstand)/issues.log", encoding: .utf8)) ?? ""
            #expect(log.split(separator: "\n").count == 1 && log.contains("completed Issues/2026-11.pdf \(3 << 20) bytes"), "\(log)")
            #expect(try daemon.app(Self.newsstand).pid == pid, "the same process throughout")
            try daemon.waitFor(Self.newsstand, "suspended", timeout: 5)

            // Another announcement within the day: recorded, not delivered, and the app is not woken.
            let again = try Self.announce(daemon, key, nginx.url("/2026-12.pdf"))
            let second = try PushIntegrationTests.record(daemon, again)
            #expect(second.outcome == "not-delivered", "\(second)")
            #expect(second.detail?.contains("woken for a new issue less than a day ago") == true, "\(second)")
            #expect(!daemon.output(Self.newsstand).contains("push \(again)"))
            #expect(ProcessProbe.isFrozen(pid))
        }
    }
}
