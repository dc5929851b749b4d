import OffstageCore
import OffstageSimulator
import Testing

/// Newsstand apps (SPEC MODE-5): a push announcing a new issue launches the app into the background, at most once a
/// day, and the issue downloads as a background transfer.
@Suite("Newsstand (SPEC MODE-5)")
struct NewsstandTests {
    static let newsstand: AppID = "com.example.newsstand"

    static func simulation() -> Simulation {
        var sim = Simulation()
        sim.install(Manifest(id: newsstand, executable: "app", backgroundModes: [.newsstandContent]))
        return sim
    }

    @Test("MODE-5: a new-issue push launches a newsstand app that is not running into the background (reason push), without the remote-notification mode")
    func newIssueLaunches() {
        var sim = Self.simulation()
        sim.receivePush(push("issue-1", to: Self.newsstand, at: sim.now))
        sim.run(for: .seconds(1))
        #expect(sim.launches(of: Self.newsstand) == [.push])
        #expect(sim.handledPushes[Self.newsstand] == ["issue-1"])
        #expect(sim.pushOutcomes["issue-1"] == .handled(.newData))
    }

    @Test("MODE-5: a second announcement within a day does not wake the app and is recorded with why; the next day's does")
    func oncePerDay() {
        var sim = Self.simulation()
        sim.receivePush(push("issue-1", to: Self.newsstand, at: sim.now))
        sim.run(for: .seconds(3_600))
        sim.receivePush(push("issue-2", to: Self.newsstand, at: sim.now))
        sim.run(for: .seconds(1))
        #expect(sim.handledPushes[Self.newsstand] == ["issue-1"])
        #expect(sim.pushOutcomes["issue-2"]?.description.contains("less than a day ago") == true, "\(String(describing: sim.pushOutcomes["issue-2"]))")
        sim.run(for: .seconds(86_400))
        sim.receivePush(push("issue-3", to: Self.newsstand, at: sim.now))
        sim.run(for: .seconds(1))
        #expect(sim.handledPushes[Self.newsstand] == ["issue-1", "issue-3"])
    }

    @Test("MODE-5, TR-1, TR-3: the issue's handler starts a background download; when it finishes the app is woken again for the transfer's events")
    func issueDownloadsAsTransfer() throws {
        var sim = Self.simulation()
        sim.transferSizes = ["https://news.example.com/issue-1.pdf": 20_000_000]
        sim.receivePush(push("issue-1", to: Self.newsstand, at: sim.now))
        sim.run(for: .milliseconds(50))
        // The handler, running: it opens its session and downloads the issue.
        sim.openTransferSession(Self.newsstand, identifier: "issues")
        let created = sim.createTransfer(Self.newsstand, session: "issues", download("https://news.example.com/issue-1.pdf"))
        let id = try #require(created)
        sim.run(for: .seconds(5))
        #expect(sim.transferEventsHeard[Self.newsstand] == [id])
        #expect(sim.handedOverTransfers == [id])
    }

    @Test("MODE-6: an app declaring neither newsstand-content nor remote-notification is not woken by a background push")
    func undeclaredIsNotWoken() {
        var sim = Simulation()
        sim.install(Manifest(id: Self.newsstand, executable: "app"))
        sim.receivePush(push("issue-1", to: Self.newsstand, at: sim.now))
        sim.run(for: .seconds(1))
        #expect(sim.launches(of: Self.newsstand).isEmpty)
        #expect(sim.pushOutcomes["issue-1"]?.description.contains("remote-notification") == true)
    }
}
