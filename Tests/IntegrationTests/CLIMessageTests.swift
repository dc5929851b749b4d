import Foundation
import OffstageProtocol
import Testing

/// Errors and output that confused people trying the CLI: each error is one line naming the thing that was wrong
/// and the fix, and what is printed says what happened.
@Suite("What the CLI says (SPEC CLI-1, CLI-2, MAN-2)", .serialized)
struct CLIMessageTests {
    /// The first line of standard error, which must carry the whole message.
    func firstLine(_ output: DaemonHarness.Output) -> String {
        String(output.stderr.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    @Test("CLI-1: wrong values and unknown verbs are named, with the fix, on one line (exit 64)")
    func usageErrors() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        let battery = try harness.cli(["device", "--battery", "-5"])
        #expect(battery.status == 64)
        #expect(firstLine(battery).contains("--battery must be a percentage from 0 to 100, or auto; got '-5'"))
        let limit = try harness.cli(["log", "--limit", "-1"])
        #expect(limit.status == 64 && firstLine(limit).contains("--limit must be 0 or more; got -1"))
        let verb = try harness.cli(["frobnicate"])  // the harness puts --socket PATH in front of it
        #expect(verb.status == 64)
        #expect(verb.stderr == "offstage: 'frobnicate' is not a verb; run `offstage --help` for the list\n")
        let setting = try harness.cli(["settings", "multi\ntasking"])
        #expect(setting.status == 64 && firstLine(setting).contains(#"'multi\ntasking' is not NAME=VALUE"#))
    }

    @Test(
        "CLI-1, §11: a negative number given to an option is refused as that option's wrong value; one where an argument goes says to put it after --",
        arguments: [
            (["transfers", "cancel", "-5"], "-5 is read as an option; give negative numbers after --"),
            (["location", "set", "-33.9", "18.4"], "-33.9 is read as an option; give negative numbers after --"),
            (["location", "set", "1", "2", "--accuracy", "-1"], "--accuracy -1.0 is not usable; give 0 to 40075017 metres"),
            (["location", "replay", "track.gpx", "--speed", "-1"], "--speed -1.0 is not usable; give a factor from 0.01 to 100000"),
            (["location", "gpsd", "--port", "-1"], "--port -1 is not a TCP port; give 1 to 65535"),
            (["push-status", "--limit", "-1"], "--limit must be 0 to 10000; got -1"),
            (["explain", "com.example.x", "--history", "--since", "-5m"], "give it without a sign"),
            (["explain", "com.example.x", "--history", "--since", "99999999999999d"], "reaches back before 1677"),
            (["push", "com.example.x", "--payload", #"{"aps":{"alert":"x"}}"#, "--expiration", "-3"], "--expiration must be seconds from now"),
        ])
    func negativeNumbers(arguments: [String], message: String) throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        let output = try harness.cli(arguments)
        #expect(output.status == 64, "a usage error: \(output)")
        #expect(firstLine(output).contains(message), "\(output.stderr)")
        let transfers = try harness.cli(["transfers", "cancel", "--", "-5"])
        #expect(transfers.status == 64 && firstLine(transfers).contains("ID '-5' is not a transfer id"))
    }

    @Test("CLI-1: an id with a newline or 100,000 characters is quoted, escaped and cut, never echoed raw")
    func hostileIDs() throws {
        try withDaemon { daemon in
            let newline = try daemon.cli(["open", "com.example\nforged line"])
            #expect(newline.status == 1)
            #expect(newline.stderr.split(separator: "\n").count == 1, "\(newline.stderr)")
            #expect(newline.stderr.contains(#"'com.example\nforged line' is not an app id"#))
            #expect(newline.stderr.contains("use the CFBundleIdentifier"))
            let long = try daemon.cli(["uninstall", String(repeating: "a", count: 100_000)])
            #expect(long.status == 1)
            #expect(long.stderr.count < 400, "\(long.stderr.count) characters")
            #expect(long.stderr.contains("(100000 characters) is not an app id"))
            let identifier = try daemon.cli(["run-task", "com.example.x", "id\u{1B}[31m"])
            #expect(identifier.stderr.split(separator: "\n").count == 1)
            #expect(!identifier.stderr.contains("\u{1B}"), "no terminal escape reaches the screen")
        }
    }

    @Test("MAN-2: an array key given as a string says to make it an array of strings")
    func manifestTypeMessages() throws {
        try withDaemon { daemon in
            let bundle = try daemon.bundle("FiniteTask", id: "com.example.typed", ["UIBackgroundModes": "fetch"])
            let output = try daemon.cli(["install", bundle])
            #expect(output.status == 4)
            #expect(firstLine(output).contains("key 'UIBackgroundModes' has the wrong type"))
            #expect(firstLine(output).contains("make it an array of strings"))
        }
    }

    @Test("CLI-2, LC-2: open says where the app is; the log says background after will-resign-active; a suspended app shows no time remaining")
    func clearOutput() throws {
        try withDaemon { daemon in
            let id = "com.example.finite-task"
            try daemon.install("FiniteTask", id: id)
            let opened = try daemon.ok("open", id)
            #expect(opened.hasPrefix("opened \(id) (pid ") && !opened.contains("(inactive)"), "\(opened)")
            try daemon.waitFor(id, "active")
            try daemon.ok("home")
            try daemon.waitFor(id, "suspended", timeout: 12)
            let lines = try daemon.log(id).map { "\($0.kind): \($0.message)" }
            let resign = try #require(lines.firstIndex(of: "callback: will-resign-active"))
            let background = try #require(lines.firstIndex(of: "state: background"))
            let enter = try #require(lines.firstIndex(of: "callback: did-enter-background"))
            #expect(resign < background && background < enter, "\(lines)")
            #expect(try daemon.app(id).backgroundTimeRemaining == nil)
        }
    }
}
