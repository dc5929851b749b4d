import Foundation
import OffstageProtocol
import Testing

/// `offstage transfers …` against the real daemon: the listing, pause, resume and cancel by hand, and every way of
/// asking wrongly (SPEC §5, CLI-1, CLI-2). The transfers are created as an app creates them: a process in the app's
/// cgroup calls `io.offstage.Transfers`.
@Suite("offstage transfers (TR-1..6, CLI-1, CLI-2)", .serialized)
struct TransferCLITests {
    static let app = "com.example.downloader"
    static let session = "com.example.downloader.background"

    /// The first line of standard error, which must carry the whole message.
    static func firstLine(_ output: DaemonHarness.Output) -> String {
        String(output.stderr.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    static func transfers(_ daemon: DaemonHarness, _ arguments: String...) throws -> [TransfersControlInterface.TransferMessage] {
        try JSONDecoder().decode(
            [TransfersControlInterface.TransferMessage].self,
            from: Data(try daemon.ok(["--json", "transfers"] + arguments).utf8))
    }

    @Test("CLI-1: transfers and each of its verbs have --help naming --json and --socket; the verb is listed")
    func help() throws {
        // The group's own help (the harness's --socket in front would pick the list verb's).
        let process = Process()
        process.executableURL = DaemonHarness.products.appendingPathComponent("offstage")
        process.arguments = ["transfers", "--help"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let group = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(["list (default)", "pause", "resume", "cancel"].allSatisfy { group.contains($0) }, "\(group)")
        let client = DaemonHarness.Client(socket: "/nonexistent/offstaged.sock")
        for verb in [["transfers"], ["transfers", "list"], ["transfers", "pause"], ["transfers", "resume"], ["transfers", "cancel"]] {
            let help = try client.run(verb + ["--help"])
            #expect(help.status == 0, "\(verb): \(help.stderr)")
            #expect(help.stdout.contains("--json") && help.stdout.contains("--socket"), "\(verb): \(help.stdout)")
        }
        #expect(try client.run(["--help"]).stdout.contains("transfers"))
    }

    @Test("CLI-2: on a fresh daemon, transfers --json prints [] (before or after the verb) and the text says there are none")
    func emptyListing() throws {
        try withDaemon { daemon in
            let after = try daemon.ok("transfers", "--json")
            #expect(after.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
            #expect(try daemon.ok("--json", "transfers") == after)
            #expect(try daemon.ok("transfers") == "no transfers\n")
            try daemon.install("FiniteTask", id: Self.app)
            #expect(try daemon.ok("transfers", Self.app) == "\(Self.app) has no transfers\n")
            #expect(try daemon.ok("transfers", "list", Self.app, "--json").trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        }
    }

    @Test("CLI-1: an unknown or malformed app, an unknown transfer and a bad id are named with the fix, one line, distinct exit status")
    func badInput() throws {
        try withDaemon { daemon in
            let missing = try daemon.cli(["transfers", "com.example.missing"])
            #expect(missing.status == 3)
            #expect(missing.stderr == "offstage: no app 'com.example.missing' is installed; install it with `offstage install BUNDLE_DIR`\n")
            let missingJSON = try daemon.cli(["--json", "transfers", "com.example.missing"])
            #expect(missingJSON.status == 3)
            let object = try JSONSerialization.jsonObject(with: Data(missingJSON.stderr.utf8)) as? [String: String]
            #expect(object?["error"] == TransfersControlInterface.name + ".AppNotInstalled")
            #expect(object?["fix"]?.contains("offstage install") == true)

            let malformed = try daemon.cli(["transfers", "com.example\nforged line"])
            #expect(malformed.status == 1)
            #expect(malformed.stderr.split(separator: "\n").count == 1, "\(malformed.stderr)")
            #expect(Self.firstLine(malformed).contains(#"'com.example\nforged line' is not an app id"#))
            #expect(Self.firstLine(malformed).contains("use the CFBundleIdentifier"))

            for verb in ["pause", "resume", "cancel"] {
                let unknown = try daemon.cli(["transfers", verb, "999999"])
                #expect(unknown.status == 5, "\(verb)")
                #expect(unknown.stderr == "offstage: no transfer 999999; list them with `offstage transfers`\n", "\(verb)")
            }
            let unknownJSON = try daemon.cli(["--json", "transfers", "pause", "999999"])
            let error = try JSONSerialization.jsonObject(with: Data(unknownJSON.stderr.utf8)) as? [String: String]
            #expect(unknownJSON.status == 5 && error?["error"] == TransfersControlInterface.name + ".NoSuchTask")

            // What the parser refuses never reaches the daemon: exit 64, naming the argument and the fix.
            for id in ["abc", "1.5", "18446744073709551616", "７"] {
                let bad = try daemon.cli(["transfers", "pause", id])
                #expect(bad.status == 64, "\(id): \(bad.stderr)")
                #expect(Self.firstLine(bad).contains("is not a transfer id; give the number in the ID column"), "\(id): \(bad.stderr)")
            }
            let negative = try daemon.cli(["transfers", "pause", "-1"])
            #expect(negative.status == 64, "\(negative.stderr)")
            #expect(Self.firstLine(negative).contains("-1 is read as an option; give negative numbers after --"), "\(negative.stderr)")
            let noID = try daemon.cli(["transfers", "cancel"])
            #expect(noID.status == 64 && noID.stderr.contains("<ID>"), "\(noID.stderr)")
            let empty = try daemon.cli(["transfers", ""])
            #expect(empty.status == 64 && Self.firstLine(empty).contains("APP_ID is empty"))
            let unknownChange = try daemon.cli(["transfers", "explode", "1"])
            #expect(unknownChange.status == 64, "\(unknownChange.stderr)")

            // A change the CLI cannot send, sent by hand: refused naming it and the changes there are.
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            let explode = try client.call(TransfersControlInterface.Method.change, ["id": 1, "change": "explode"])
            #expect(explode["error"] as? String == TransfersControlInterface.name + ".InvalidArgument", "\(explode)")
            let parameters = explode["parameters"] as? [String: Any]
            #expect((parameters?["message"] as? String)?.contains("'explode' is not cancel, pause or resume") == true, "\(explode)")
            #expect(parameters?["fix"] as? String == "use cancel, pause or resume")
            let wrongType = try client.call(TransfersControlInterface.Method.list, ["app": 42])
            #expect(wrongType["error"] as? String == "org.varlink.service.InvalidParameter")
            let noApp = try client.call(TransfersControlInterface.Method.list, ["app": "com.example.missing"])
            #expect(noApp["error"] as? String == TransfersControlInterface.name + ".AppNotInstalled")
            #expect(try daemon.ok("--json", "transfers").trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        }
    }

    @Test("CLI-2: the table shows progress in units with a percent, why each waits, how each ended; app text is escaped")
    func tableOfEveryState() throws {
        func transfer(_ id: Int, _ state: String, done: Int, expected: Int?, waiting: String = "", more: String = "") -> String {
            #"{"app":"com.example.a","session":"s\#(id)","id":\#(id),"kind":"download","url":"https://x/\#(id)","#
                + #""state":"\#(state)","bytesDone":\#(done),\#(expected.map { #""bytesExpected":\#($0),"# } ?? "")"#
                + #""discretionary":false,"attempts":2,"waitingFor":[\#(waiting)],"createdAt":1795499940\#(more)}"#
        }
        let transfers = [
            transfer(1, "running", done: 1_500_000, expected: 4_000_000),
            transfer(2, "waiting", done: 999, expected: nil, waiting: #""no network","a\u001b[31mb""#, more: #","lastError":"reset""#),
            transfer(3, "failed", done: 12, expected: 12_345_678_901,
                more: #","failure":{"code":"http-status","status":404,"message":"Not Found"},"finishedAt":1795499950"#),
            transfer(4, "completed", done: 1000, expected: 1000, more: #","httpStatus":200,"finishedAt":1795499950"#),
            transfer(5, "paused", done: 0, expected: 0),
        ]
        let reply = #"{"parameters":{"transfers":[\#(transfers.joined(separator: ","))]}}"#
        let (output, call) = try NotificationCLITests.run(["transfers", "com.example.a"], reply: reply)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(call["method"] as? String == TransfersControlInterface.Method.list)
        #expect((call["parameters"] as? [String: Any])?["app"] as? String == "com.example.a")
        let rows = output.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 6, "\(output.stdout)")
        guard rows.count == 6 else { return }
        #expect(rows[1].contains("running") && rows[1].contains("1.5 MB / 4.0 MB (37 %)") && rows[1].contains("attempt 2"), "\(rows[1])")
        #expect(rows[2].contains("999 B / ?") && rows[2].contains(#"no network; a\u{1b}[31mb; last error: reset"#), "\(rows[2])")
        #expect(rows[3].contains("12 B / 12.3 GB (0 %)") && rows[3].contains("http-status 404: Not Found"), "\(rows[3])")
        #expect(rows[4].contains("1.0 kB / 1.0 kB (100 %)") && rows[4].contains("HTTP 200, finished "), "\(rows[4])")
        #expect(rows[5].contains("0 B / 0 B") && rows[5].contains("resume with `offstage transfers resume 5`"), "\(rows[5])")
        #expect(!output.stdout.contains("\u{1B}"), "no terminal escape reaches the screen")
        let (json, _) = try NotificationCLITests.run(["--json", "transfers"], reply: reply)
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(objects.count == 5 && objects.allSatisfy { $0.count == 17 }, "\(json.stdout)")
        #expect((objects[1]["waitingFor"] as? [String])?.first == "no network")
    }

    @Test("Security: an app's process cannot list or change transfers as the user")
    func appsCannotActAsTheUser() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            let replies = try daemon.callAsApp(
                Self.app,
                [
                    (TransfersControlInterface.Method.list, [:]),
                    (TransfersControlInterface.Method.list, ["app": Self.app]),
                    (TransfersControlInterface.Method.change, ["id": 1, "change": "cancel"]),
                ])
            #expect(replies.count == 3)
            for reply in replies {
                #expect(reply["error"] as? String == "org.varlink.service.PermissionDenied", "\(reply)")
            }
        }
    }

    @Test("TR-1, CLI-2: a waiting download is listed with why it waits; pause, resume and cancel it by hand, each refused when it cannot apply")
    func listPauseResumeCancel() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.install("FiniteTask", id: "com.example.other")
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            // An hour from now: the task waits for its earliest begin, whatever the network does.
            let replies = try daemon.callAsApp(
                Self.app,
                [
                    (TransfersInterface.Method.openSession, ["identifier": Self.session]),
                    (
                        TransfersInterface.Method.createTask,
                        [
                            "session": Self.session, "kind": "download", "url": "http://127.0.0.1:9/big.iso",
                            "earliestBegin": DaemonHarness.now() + 3600,
                        ]
                    ),
                ])
            #expect(replies[0]["error"] == nil, "\(replies[0])")
            let created = try #require((replies[1]["parameters"] as? [String: Any])?["task"] as? [String: Any], "\(replies[1])")
            let id = try #require((created["id"] as? NSNumber)?.uint64Value)

            // --json: an array of objects with the contract's fields.
            let text = try daemon.ok("--json", "transfers")
            let objects = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
            #expect(objects.count == 1)
            let object = try #require(objects.first)
            // Every key, null when not known: scripts can rely on each.
            let keys: Set = [
                "app", "session", "id", "kind", "url", "state", "bytesDone", "bytesExpected", "discretionary", "attempts",
                "waitingFor", "retryAt", "lastError", "httpStatus", "failure", "createdAt", "finishedAt",
            ]
            #expect(Set(object.keys) == keys)
            #expect(object["bytesExpected"] is NSNull && object["failure"] is NSNull && object["finishedAt"] is NSNull)
            #expect((object["waitingFor"] as? [String])?.isEmpty == false, "\(object)")
            let listed = try #require(try Self.transfers(daemon).first)
            #expect(listed.app == Self.app && listed.session == Self.session && listed.id == id)
            #expect(listed.kind == "download" && listed.state == "waiting" && listed.bytesDone == 0)
            #expect(listed.url == "http://127.0.0.1:9/big.iso")
            #expect(!listed.waitingFor.isEmpty && listed.waitingFor.allSatisfy { !$0.isEmpty }, "\(listed.waitingFor)")
            #expect(try Self.transfers(daemon, Self.app) == [listed])
            #expect(try Self.transfers(daemon, "com.example.other").isEmpty)

            // The table: a header, the row, its progress and why it waits.
            let table = try daemon.ok("transfers")
            let lines = table.split(separator: "\n")
            #expect(lines.count == 2, "\(table)")
            #expect(lines.first?.hasPrefix("APP") == true && lines.first?.contains("PROGRESS") == true, "\(table)")
            let row = String(lines.last ?? "")
            #expect(row.contains(Self.app) && row.contains(Self.session) && row.contains(" \(id) "), "\(row)")
            #expect(row.contains("download") && row.contains("waiting") && row.contains("0 B / ?"), "\(row)")
            #expect(row.contains(listed.waitingFor[0]), "\(row) names \(listed.waitingFor)")

            // explain (SCH-8) shows the transfer beside scheduled work, with the controller of what holds it.
            let explained = try daemon.ok("explain", Self.app)
            #expect(explained.contains("transfer \(id) (download http://127.0.0.1:9/big.iso, session \(Self.session), waiting)"), "\(explained)")
            #expect(explained.contains("  waiting [time-window]: \(listed.waitingFor[0])"), "\(explained)")
            let reply = try JSONDecoder().decode(
                ControlInterface.ExplainReply.self, from: Data(try daemon.ok("explain", Self.app, "--json").utf8))
            let transfer = try #require(reply.transfers.first)
            #expect(reply.transfers.count == 1 && transfer.id == id && transfer.state == "waiting" && transfer.bytesExpected == nil)
            #expect(transfer.holds.map(\.reason) == listed.waitingFor && transfer.summary == "waiting: " + listed.waitingFor[0])
            #expect(try daemon.ok("explain", "com.example.other").contains("has no pending or running background work"))

            // Pause: it says how to resume, the listing says so too; pausing again is refused naming the state.
            let paused = try daemon.ok("transfers", "pause", String(id))
            #expect(paused == "paused transfer \(id); resume it with `offstage transfers resume \(id)`\n")
            #expect(try Self.transfers(daemon).first?.state == "paused")
            #expect(try Self.transfers(daemon).first?.waitingFor == [])
            #expect(try daemon.ok("transfers").contains("resume with `offstage transfers resume \(id)`"))
            let again = try daemon.cli(["transfers", "pause", String(id)])
            #expect(again.status == 1)
            #expect(again.stderr == "offstage: transfer \(id) is paused, not waiting or running; pause a waiting or running transfer\n")

            // Resume, with --json: the small object; it waits again.
            let resumed = try daemon.ok("--json", "transfers", "resume", String(id))
            let change = try JSONSerialization.jsonObject(with: Data(resumed.utf8)) as? [String: Any]
            #expect(change?["change"] as? String == "resume" && (change?["id"] as? NSNumber)?.uint64Value == id)
            #expect(try Self.transfers(daemon).first?.state == "waiting")
            let notPaused = try daemon.cli(["transfers", "resume", String(id)])
            #expect(notPaused.status == 1 && notPaused.stderr.contains("is waiting, not paused; resume a paused transfer"))

            // Cancel: it fails as cancelled (listed until the app hears of it); cancelling again is refused.
            let cancelled = try daemon.ok("transfers", "cancel", String(id))
            #expect(cancelled.hasPrefix("cancelled transfer \(id)"))
            let failed = try #require(try Self.transfers(daemon).first)
            #expect(failed.state == "failed" && failed.failure?.code == "cancelled", "\(failed)")
            #expect(failed.finishedAt != nil)
            let failedObject = try JSONSerialization.jsonObject(with: Data(try daemon.ok("--json", "transfers").utf8)) as? [[String: Any]]
            let failure = failedObject?.first?["failure"] as? [String: Any]
            #expect(failure?["code"] as? String == "cancelled" && failure?["status"] is NSNull, "\(failedObject ?? [])")
            #expect(try daemon.ok("transfers").contains("cancelled: cancelled by hand"))
            let twice = try daemon.cli(["transfers", "cancel", String(id)])
            #expect(twice.status == 1 && twice.stderr.contains("has already failed; nothing to cancel"), "\(twice.stderr)")
            let resumeFailed = try daemon.cli(["transfers", "resume", String(id)])
            #expect(resumeFailed.status == 1 && resumeFailed.stderr.contains("is failed, not paused"))
            // The daemon's log names each change by hand.
            let log = try daemon.log(Self.app).map(\.message)
            for word in ["paused by hand", "resumed by hand", "cancelled by hand"] {
                #expect(log.contains("transfer \(id) \(word)"), "\(word) in \(log)")
            }
        }
    }
}
