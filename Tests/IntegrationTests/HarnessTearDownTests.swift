import Foundation
import OffstageDaemon
import Testing

/// The integration tests' own promise: they end exactly the processes they started, by pid, and leave no cgroup and no
/// nftables table — also when a test leaves the daemon dead (a crash under test, a failed expectation after `kill -9`).
@Suite("Harness tear-down after the daemon died")
struct HarnessTearDownTests {
    static let app = "com.example.finite-task"

    @Test("Tear-down ends a frozen app whose daemon was killed, by pid, and removes the daemon's cgroups")
    func tearDownAfterKilledDaemon() throws {
        let daemon = try DaemonHarness()
        var torn = false
        defer { if !torn { daemon.tearDown() } }
        try daemon.start()
        try daemon.install("FiniteTask", id: Self.app)
        try daemon.ok("open", Self.app)
        try daemon.waitFor(Self.app, "active")
        try daemon.ok("home")
        try daemon.waitFor(Self.app, "suspended", timeout: 12)
        let pid = try #require(try daemon.app(Self.app).pid)
        #expect(ProcessProbe.isFrozen(pid))
        let groups = DaemonHarness.cgroupFolders(instance: OffstageDaemonService.instanceName(for: daemon.stateDirectory))
        if let memory = MemoryLimitIntegrationTests.controllerMount {
            #expect(groups.contains { $0.hasPrefix(memory + "/") }, "the app's memory group is among them (SPEC MEM-2)")
        }

        let table = "offstage_" + OffstageDaemonService.instanceName(for: daemon.stateDirectory)
        daemon.crash()
        #expect(ProcessProbe.isAlive(pid), "the frozen app outlives its daemon")
        let kept = try DaemonHarness.networkTables().contains(table)
        daemon.tearDown()
        torn = true
        let end = Date().addingTimeInterval(5)
        while ProcessProbe.isAlive(pid), Date() < end { usleep(20_000) }
        #expect(!ProcessProbe.isAlive(pid), "the app \(pid) is ended though the daemon could not list it")
        for group in groups { #expect(!FileManager.default.fileExists(atPath: group), "\(group) is left behind") }
        if Nftables.usable {
            #expect(kept, "a killed daemon's rules stay in force (decision 0051)")
            #expect(try !DaemonHarness.networkTables().contains(table), "its table is removed by the tear-down")
        }
    }
}
