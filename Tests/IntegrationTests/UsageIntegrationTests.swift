import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// What each app used, measured by the real daemon (SPEC SET-3): the feed reader example downloads a feed from a real
/// nginx on 127.0.0.1 with its own `URLSession`, in front and in an app-refresh task; `offstage usage` then shows the
/// bytes its sockets received (from the nftables counters of its cgroup), its CPU (from the cgroup's `cpu.stat`), its
/// background runtime and wake-up, and its memory. Needs nftables and root for the bytes, as the data controls do.
@Suite(
    "Usage per app, measured (SPEC SET-3)",
    .enabled(if: Nftables.usable, "nftables is not usable here: install it (apt-get install nftables) and run as root"))
struct UsageIntegrationTests {
    static let id = DataControlsIntegrationTests.feedSync

    static func usage(_ daemon: DaemonHarness, _ arguments: String...) throws -> ControlInterface.UsageReply {
        try JSONDecoder().decode(ControlInterface.UsageReply.self, from: Data(try daemon.ok(["--json", "usage"] + arguments).utf8))
    }

    /// The sum of the rows that match.
    static func received(_ reply: ControlInterface.UsageReply, foreground: Bool) -> Int64 {
        reply.rows.filter { $0.app == id && $0.foreground == foreground && $0.metered }.map(\.received).reduce(0, +)
    }

    @Test("SET-3: the bytes an app's sockets received in front and in the background are counted within 1 % of what the server sent; CPU, background runtime, a wake-up and memory are counted; they survive a restart")
    func bytesCountedWithinOnePercent() throws {
        let nginx = try TransferIntegrationTests.startNginx()
        defer { nginx.stop() }
        // About 1 MB: the packets' own headers (IP, TCP, the handshake) stay well under 1 % of it.
        _ = try DataControlsIntegrationTests.serveFeed(nginx, items: 1_000)
        try withDaemon { daemon in
            try DataControlsIntegrationTests.installFeedSync(daemon, nginx.url("/feed.xml"))
            try daemon.ok("device", "--network", "metered")
            let front = try DataControlsIntegrationTests.openAndSync(daemon)
            #expect(front.hasPrefix("sync 1 (foreground): "), "\(front)")
            try daemon.ok("home")
            let back = try DataControlsIntegrationTests.backgroundSync(daemon)
            #expect(back.hasPrefix("sync 2 (background): "), "\(back)")
            let requests = try nginx.requests(atLeast: 2)
            let sent = requests.map(\.bytesSent)
            #expect(sent.allSatisfy { $0 > 1_000_000 }, "\(requests)")

            // Once its task is over and it is frozen again, its background use is a whole stretch.
            try daemon.waitFor(Self.id, "suspended")
            // Its memory is read a little after it is frozen, with no query: `offstage apps` shows it.
            try daemon.waitUntil("the frozen app's memory is read", timeout: 10) {
                (try daemon.app(Self.id).memoryBytes ?? 0) > 1_000_000
            }
            let reply = try Self.usage(daemon, Self.id)
            #expect(reply.bytesCounted == "enforced")
            let inFront = Self.received(reply, foreground: true)
            let inBackground = Self.received(reply, foreground: false)
            #expect(abs(Double(inFront - sent[0])) <= Double(sent[0]) * 0.01, "in front: counted \(inFront), nginx sent \(sent[0])")
            #expect(
                abs(Double(inBackground - sent[1])) <= Double(sent[1]) * 0.01,
                "in the background: counted \(inBackground), nginx sent \(sent[1])")
            let rows = reply.rows.filter { $0.app == Self.id }
            #expect(rows.allSatisfy { $0.metered }, "the network was metered throughout: \(rows)")
            let background = rows.filter { !$0.foreground }
            #expect(background.map(\.wakeUps).reduce(0, +) == 1, "the refresh task woke it once: \(background)")
            #expect(background.map(\.seconds).reduce(0, +) > 0, "it ran in the background: \(background)")
            #expect(rows.filter(\.foreground).map(\.cpuSeconds).reduce(0, +) > 0, "it used CPU in front: \(rows)")
            #expect(rows.map(\.sent).reduce(0, +) > 0, "its requests went out: \(rows)")
            let app = try #require(reply.apps.first)
            #expect(app.app == Self.id && app.state == "suspended")
            #expect((app.memoryBytes ?? 0) > 1_000_000, "a running app has memory: \(app)")
            #expect(reply.memory.contains { $0.app == Self.id && $0.peakBytes >= (app.memoryBytes ?? 0) })

            // offstage apps shows the memory too, and the band (MEM-1): the only app running, suspended, ended first.
            let listed = try daemon.app(Self.id)
            #expect((listed.memoryBytes ?? 0) > 1_000_000)
            #expect(listed.memoryBand == "suspended" && listed.memoryEndingRank == 1 && !listed.keptInMemory, "\(listed)")
            let apps = try daemon.ok("apps")
            #expect(apps.contains("MEMORY") && apps.contains("BAND") && apps.contains("suspended #1"), "\(apps)")
            let table = try daemon.ok("usage")
            #expect(table.contains(Self.id) && table.contains("WAKE-UPS") && table.contains("total"), "\(table)")
            let byDay = try daemon.ok("usage", Self.id)
            #expect(byDay.contains("background-data on") && byDay.contains("memory now: "), "\(byDay)")
            let date = try #require(rows.first?.date)
            #expect(date.count == 10 && byDay.contains(date), "\(byDay)")
            // Every app at once: sums over the window, no date.
            let all = try Self.usage(daemon)
            #expect(all.rows.allSatisfy { $0.date == nil } && all.memory.allSatisfy { $0.date == nil }, "\(all.rows)")
            let summedReceived: Int64 = all.rows.filter { $0.app == Self.id }.map(\.received).reduce(0, +)
            let dailyReceived: Int64 = rows.map(\.received).reduce(0, +)
            // The same bytes (the frozen app moved none in between; a stray packet to its sockets is allowed for).
            #expect(summedReceived >= dailyReceived && summedReceived - dailyReceived < 10_000, "\(summedReceived) against \(dailyReceived)")

            // A clean stop counts what the app used to the end, and the store keeps it.
            daemon.stop()
            try daemon.start()
            let after = try Self.usage(daemon, Self.id)
            #expect(Self.received(after, foreground: true) >= inFront)
            #expect(Self.received(after, foreground: false) >= inBackground)
            #expect(after.rows.filter { !$0.foreground }.map(\.wakeUps).reduce(0, +) == 1)
            #expect(after.apps.first?.memoryBytes == nil, "not running after the restart: \(after.apps)")
        }
    }

    @Test("SET-3: usage refuses an app that is not installed, a start in the future and a malformed one, and changes nothing")
    func badQueries() throws {
        try withDaemon { daemon in
            let missing = try daemon.cli(["usage", "com.example.nothing"])
            #expect(missing.status == 3 && missing.stderr.contains("com.example.nothing"), "\(missing)")
            let future = try daemon.cli(["usage", "--since", "2999-01-01"])
            #expect(future.status == 64 && future.stderr.contains("in the future"), "\(future)")
            let garbage = try daemon.cli(["usage", "--since", "yesterday"])
            #expect(garbage.status == 64 && garbage.stderr.contains("--since must be"), "\(garbage)")
            let sort = try daemon.cli(["usage", "--sort", "colour"])
            #expect(sort.status == 64 && sort.stderr.contains("colour"), "\(sort)")
            let empty = try Self.usage(daemon)
            #expect(empty.rows.isEmpty && empty.apps.isEmpty)
        }
    }
}
