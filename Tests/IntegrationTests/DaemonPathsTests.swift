import Foundation
import OffstageProtocol
import Testing

@Suite("Daemon paths")
struct DaemonPathsTests {
    @Test("A relative --socket and --state-dir are resolved: an app launched in its own folder still reaches the daemon")
    func relativePaths() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        let daemon = Process()
        daemon.executableURL = DaemonHarness.products.appendingPathComponent("offstaged")
        daemon.currentDirectoryURL = harness.root
        daemon.arguments = ["--state-dir", "relative-state", "--socket", "relative.sock", "--log-level", "error"]
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        harness.track(daemon.processIdentifier)
        defer {
            kill(daemon.processIdentifier, SIGTERM)
            daemon.waitUntilExit()
        }
        let socket = harness.root.path + "/relative.sock"
        let client = DaemonHarness.Client(socket: socket)
        try harness.waitUntil("the daemon answers") { (try? client.run(["status"]))?.status == 0 }
        let bundle = try harness.bundle("FiniteTask", id: "com.example.relative")
        #expect(try client.run(["install", bundle]).status == 0)
        #expect(try client.run(["open", "com.example.relative"]).status == 0)
        try harness.waitUntil("the app attached and became active") {
            let apps = try JSONDecoder().decode([ControlInterface.App].self, from: Data(try client.run(["--json", "apps"]).stdout.utf8))
            return apps.first?.state == "active"
        }
        #expect(FileManager.default.fileExists(atPath: harness.root.path + "/relative-state/offstage.sqlite"))
    }
}
