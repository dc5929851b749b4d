import OffstageCore
import Testing

/// The next deadline is kept per app as inputs change processes, so the shell's query after every input looks at the
/// apps whose process has a deadline, not at every installed app (SPEC §11 scale: 1,000 apps).
@Suite("Next deadline at scale (SPEC §11)")
struct DeadlineScaleTests {
    static let now = Instant(secondsSinceEpoch: 1_000)

    /// `count` installed apps, none running.
    func installed(_ count: Int) -> OffstageCore {
        var core = OffstageCore(numberSeed: 1)
        for index in 0..<count {
            let id = AppID("com.example.app\(index)")
            core.restore(InstalledApp(manifest: manifest(id), bundlePath: "/x", installedAt: Self.now), durable: .init())
        }
        return core
    }

    @Test("with 1,000 apps installed, the next deadline is the running apps' earliest, kept as they change")
    func nextDeadlineFollowsRunningApps() throws {
        var core = installed(1_000)
        #expect(core.nextDeadline == nil, "nothing runs: nothing to wake up for")

        // Two apps found alive after a restart: each must reattach within the reattach timeout (20 s).
        let first = AppID("com.example.app10")
        let second = AppID("com.example.app500")
        _ = core.adopt(first, pid: 100, at: Self.now)
        _ = core.adopt(second, pid: 200, at: Self.now + .seconds(5))
        #expect(core.nextDeadline == Self.now + .seconds(20))
        #expect(core.processDeadlinesOutOfDate().isEmpty)

        // The first reattaches, idle in the background: its next deadline is its suspension, 1 s later.
        let later = Self.now + .seconds(8)
        _ = try core.attached(first, pid: 100, report: AttachReport(launchCompleted: true, state: .background, openTasks: []), at: later)
        #expect(core.nextDeadline == later + .seconds(1))
        #expect(core.processDeadlinesOutOfDate().isEmpty)

        // Suspended when that comes: only the second app's reattach deadline is left.
        #expect(core.advance(to: later + .seconds(1)).contains(.freeze(first, pid: 100)))
        #expect(core.nextDeadline == Self.now + .seconds(25))

        // The second exits: no process has a deadline any more.
        _ = core.processExited(second, pid: 200, status: .exited(0), at: later + .seconds(2))
        #expect(core.nextDeadline == nil)
        #expect(core.processDeadlinesOutOfDate().isEmpty)
    }

    @Test("a timer firing touches only the apps whose deadline has come")
    func advanceTouchesDueAppsOnly() throws {
        var core = installed(1_000)
        _ = core.adopt(AppID("com.example.app1"), pid: 100, at: Self.now)
        _ = core.adopt(AppID("com.example.app2"), pid: 200, at: Self.now + .seconds(10))
        // At 20 s only the first has not reattached in time: it alone is terminated.
        let actions = core.advance(to: Self.now + .seconds(20))
        #expect(actions.contains(.terminate(AppID("com.example.app1"), pid: 100)))
        #expect(!actions.contains(.terminate(AppID("com.example.app2"), pid: 200)))
        #expect(core.processDeadlinesOutOfDate().isEmpty)
    }
}
