import Foundation
import OffstageProtocol
import Testing

@Suite("The offstage CLI (SPEC CLI-1, CLI-2)", .serialized)
struct CLITests {
    static let verbs = [
        "install", "uninstall", "apps", "open", "home", "lock", "unlock", "interrupt", "force-quit", "settings", "log",
        "status", "transfers",
    ]

    @Test("Every verb has --help that names --json and --socket")
    func everyVerbHasHelp() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        for verb in Self.verbs {
            let output = try harness.cli([verb, "--help"])
            #expect(output.status == 0, "\(verb)")
            #expect(output.stdout.contains("--json") && output.stdout.contains("--socket"), "\(verb): \(output.stdout)")
        }
        let top = try harness.cli(["--help"])
        #expect(Self.verbs.allSatisfy { top.stdout.contains($0) })
    }

    @Test("Without a daemon: one line on stderr naming the socket and the fix, exit status 69")
    func daemonUnreachable() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        let output = try harness.cli(["apps"])
        #expect(output.status == 69)
        #expect(output.stderr.contains(harness.socket) && output.stderr.contains("offstaged"))
        #expect(output.stderr.split(separator: "\n").count == 1)
    }

    @Test("apps --json: the contract's fields; errors: one line and a distinct exit status; --json before or after the verb")
    func jsonContractAndErrors() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: "com.example.finite-task")
            let before = try daemon.ok("--json", "apps")
            let after = try daemon.ok("apps", "--json")
            #expect(before == after)
            let objects = try #require(try JSONSerialization.jsonObject(with: Data(before.utf8)) as? [[String: Any]])
            let app = try #require(objects.first)
            for key in ["id", "state", "pid", "backgroundTasks", "backgroundTimeRemaining"] {
                #expect(app.keys.contains(key), "\(key) in \(app.keys.sorted())")
            }
            #expect(app["state"] as? String == "notRunning")
            #expect(app["pid"] is NSNull && app["backgroundTimeRemaining"] is NSNull)
            try daemon.ok("open", "com.example.finite-task")
            try daemon.waitFor("com.example.finite-task", "active")
            let running = try daemon.app("com.example.finite-task")
            #expect(running.pid != nil && running.backgroundTimeRemaining == nil && running.backgroundTasks == 0)

            let missing = try daemon.cli(["open", "com.example.missing"])
            #expect(missing.status == 3)
            #expect(missing.stderr == "offstage: no app 'com.example.missing' is installed; install it with `offstage install BUNDLE_DIR`\n")
            let jsonError = try daemon.cli(["--json", "force-quit", "com.example.missing"])
            #expect(jsonError.status == 3)
            let object = try JSONSerialization.jsonObject(with: Data(jsonError.stderr.utf8)) as? [String: String]
            #expect(object?["error"] == "io.offstage.Control.AppNotInstalled")
            let usage = try daemon.cli(["interrupt", "--accept", "--dismiss"])
            #expect(usage.status == 64 && usage.stderr.contains("not both"))
            let badSetting = try daemon.cli(["settings", "teleport=on"])
            #expect(badSetting.status == 1 && badSetting.stderr.contains("valid device settings: multitasking"))
            let perApp = try daemon.cli(["settings", "background-data=off"])
            #expect(perApp.stderr.contains("is a per-app setting: add --app APP_ID"))
            let locked = try daemon.cli(["lock"])
            #expect(locked.status == 0)
            let whileLocked = try daemon.cli(["open", "com.example.finite-task"])
            #expect(whileLocked.status == 1 && whileLocked.stderr.contains("run `offstage unlock` first"))
        }
    }

    @Test("LC-2: open --wait returns once the app is active; a wait that ends first says the state and the fix")
    func openWaitsUntilActive() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: "com.example.finite-task")
            // No time to wait: a launch is never active at once, so this fails, naming the state.
            let early = try daemon.cli(["open", "com.example.finite-task", "--wait", "0"])
            #expect(early.status == 1)
            #expect(early.stderr.hasPrefix("offstage: 'com.example.finite-task' is inactive, not active after 0.0 s"))
            #expect(early.stderr.hasSuffix("see `offstage log --app com.example.finite-task`\n"))
            try daemon.ok("home")
            let opened = try daemon.cli(["open", "com.example.finite-task", "--wait", "10"])
            #expect(opened.status == 0, "\(opened.stderr)")
            #expect(opened.stdout.hasSuffix("): active\n"), "\(opened.stdout)")
            #expect(try daemon.app("com.example.finite-task").state == "active")
            let json = try daemon.cli(["--json", "open", "com.example.finite-task", "--wait", "10"])
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(object?["state"] as? String == "active")
            for bad in ["-1", "3601", "soon"] {
                let refused = try daemon.cli(["open", "com.example.finite-task", "--wait", bad])
                #expect(refused.status == 64 && refused.stderr.contains("--wait"), "\(bad): \(refused.stderr)")
            }
        }
    }

    @Test("Verbs print JSON with --json; status reports the freezer; log --follow streams entries as they happen")
    func jsonOutputAndFollow() throws {
        try withDaemon { daemon in
            let status = try JSONSerialization.jsonObject(with: Data(try daemon.ok("--json", "status").utf8)) as? [String: Any]
            #expect(["cgroupV2", "cgroupV1", "signalStop"].contains(status?["freezer"] as? String ?? ""))
            #expect(status?["socket"] as? String == daemon.socket)
            for verb in [["home"], ["lock"], ["unlock"], ["settings"], ["log", "--limit", "3"]] {
                let text = try daemon.ok(["--json"] + verb)
                #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "\(verb): \(text)")
            }
            // Follow: start it, cause an event, read the streamed line.
            let follow = Process()
            follow.executableURL = DaemonHarness.products.appendingPathComponent("offstage")
            follow.arguments = ["--socket", daemon.socket, "--json", "log", "--follow", "--limit", "0"]
            let outputPath = daemon.root.path + "/follow.out"
            _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
            follow.standardOutput = FileHandle(forWritingAtPath: outputPath)
            try follow.run()
            daemon.track(follow.processIdentifier)
            usleep(300_000)
            try daemon.install("FiniteTask", id: "com.example.followed")
            var text = ""
            try daemon.waitUntil("the follower printed the install", timeout: 5) {
                text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
                return text.contains("com.example.followed")
            }
            kill(follow.processIdentifier, SIGTERM)
            follow.waitUntilExit()
            let line = try #require(text.split(separator: "\n").first { $0.contains("com.example.followed") })
            let entry = try JSONDecoder().decode(ControlInterface.LogLine.self, from: Data(line.utf8))
            #expect(entry.kind == "install")
        }
    }
}
