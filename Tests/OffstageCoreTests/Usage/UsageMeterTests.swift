@testable import OffstageCore
import OffstageSimulator
import Testing

/// What each app's use counts as (SPEC SET-3), decided by the core on virtual time: in front or in the background,
/// running or frozen, metered or not, which local day, and whether it began with a background wake-up.
@Suite("Usage contexts, decided by the core (SPEC SET-3)")
struct UsageMeterTests {
    private func context(_ sim: Simulation, _ id: AppID) -> UsageContext? { sim.core.usage.contexts[id] }

    private func refreshSimulation() -> Simulation {
        var tasks = TaskBehavior()
        tasks.runtime = .seconds(20)
        var sim = Simulation()
        // Due in an hour: nothing launches it before the test does.
        let later = TaskBehavior.Submission(refreshID, earliestAfter: .seconds(3_600))
        sim.install(schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks), pending: [later])
        return sim
    }

    @Test("SET-3: open, home, frozen, woken for a task: in front, running in the background, suspended, and a wake-up only for the task")
    func contextsFollowTheApp() throws {
        var sim = refreshSimulation()
        #expect(context(sim, refreshApp) == nil, "installed, no process: nothing counts")
        try sim.openAndSettle(refreshApp)
        let front = try #require(context(sim, refreshApp))
        #expect(front.foreground && !front.backgroundRunning && !front.wakeUp && !front.metered)
        sim.home()
        let leaving = try #require(context(sim, refreshApp))
        #expect(!leaving.foreground && leaving.backgroundRunning && !leaving.wakeUp, "leaving the front is no wake-up")
        sim.run(for: .seconds(30))
        #expect(sim.state(of: refreshApp) == .suspended)
        let frozen = try #require(context(sim, refreshApp))
        #expect(!frozen.running && !frozen.wakeUp)
        try sim.runTaskNow(refreshApp, refreshID)
        let woken = try #require(context(sim, refreshApp))
        #expect(woken.backgroundRunning && woken.wakeUp && woken.since == sim.now)
        sim.run(for: .seconds(60))
        #expect(sim.state(of: refreshApp) == .suspended)
        let figures = sim.usage.figures.filter { $0.key.app == refreshApp }
        #expect(figures.values.map(\.wakeUps).reduce(0, +) == 1)
        let background = figures.filter { !$0.key.foreground }.values.map(\.seconds).reduce(0, +)
        // Running in the background: after home until frozen, and the task's 20 s.
        #expect(background >= 20 && background < 60, "\(figures)")
        #expect(figures.filter(\.key.foreground).values.map(\.seconds).reduce(0, +) >= 0.1)
    }

    @Test("SET-3: a launch into the background is a wake-up; the process's exit ends the count")
    func launchIsAWakeUpAndExitEnds() throws {
        var sim = refreshSimulation()
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(1))
        let launched = try #require(context(sim, refreshApp))
        #expect(launched.backgroundRunning && launched.wakeUp)
        sim.killProcess(of: refreshApp)
        #expect(context(sim, refreshApp) == nil)
        #expect(sim.usage.figures.values.map(\.wakeUps).reduce(0, +) == 1)
    }

    @Test("SET-3: a change of network kind starts a new context for every app with a process, metered, with no wake-up")
    func networkKindSplits() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(30))
        try sim.openAndSettle(appB)
        var overrides = ConditionOverrides()
        overrides.network = .metered
        let before = sim.now
        try sim.setConditions(overrides)
        for id in [appA, appB] {
            let split = try #require(context(sim, id))
            #expect(split.metered && split.since >= before && !split.wakeUp)
        }
        #expect(context(sim, appB)?.foreground == true && context(sim, appA)?.running == false)
    }

    @Test("SET-3: a running app is split at local midnight, with a deadline of its own; a frozen one waits for its next change")
    func midnightSplitsRunningApps() throws {
        var configuration = CoreConfiguration()
        configuration.utcOffsetSeconds = 3_600
        var sim = Simulation(configuration: configuration)
        sim.install(manifest(appA))
        sim.install(manifest(appB))
        try sim.openAndSettle(appB)
        sim.home()
        sim.run(for: .seconds(30))
        try sim.openAndSettle(appA)
        let clock = LocalClock(utcOffsetSeconds: 3_600)
        let today = clock.day(sim.now)
        let midnight = clock.startOfDay(today + 1)
        #expect(sim.core.nextDeadline.map { $0 <= midnight } == true)
        #expect(sim.core.usage.nextSplit(clock) == midnight)
        let opened = try #require(context(sim, appA)).since
        sim.run(until: midnight + .seconds(1))
        let front = try #require(context(sim, appA))
        #expect(front.day == today + 1 && front.since == midnight && front.foreground && !front.wakeUp)
        #expect(context(sim, appB)?.day == today, "frozen: split at its next change, without a wake-up of its own")
        let yesterday = try #require(sim.usage.figures[UsageKey(app: appA, day: today, foreground: true, metered: false)])
        #expect(abs(yesterday.seconds - (midnight - opened).inSeconds) < 1e-6, "in front from the open to midnight")
    }

    @Test("SET-3: an app found alive after a restart is counted again without a wake-up")
    func adoptionIsNoWakeUp() throws {
        var core = OffstageCore()
        let now = Instant(secondsSinceEpoch: 1_800_000_000)
        _ = try core.install(InstalledApp(manifest: manifest(appA), bundlePath: "/a", installedAt: now), at: now)
        let actions = core.adopt([(appA, 4242)], at: now)
        let change = actions.compactMap { if case .usage(let change) = $0 { change } else { nil } }.first
        let adopted = try #require(change?.contexts[appA] ?? nil)
        #expect(adopted.backgroundRunning && !adopted.wakeUp)
    }

    @Test("SET-3: the bytes the daemon moves for an app's transfers are counted to the app, as it is now")
    func transferBytesCounted() throws {
        var core = OffstageCore()
        let now = Instant(secondsSinceEpoch: 1_800_000_000)
        _ = try core.install(InstalledApp(manifest: manifest(appA), bundlePath: "/a", installedAt: now), at: now)
        core.countTransferred(appA, .download, bytes: 1_000)
        core.countTransferred(appA, .upload, bytes: 10)
        core.countTransferred(appA, .download, bytes: -5)
        let actions = core.advance(to: now)
        let change = try #require(actions.compactMap { if case .usage(let change) = $0 { change } else { nil } }.first)
        let key = UsageKey(app: appA, day: LocalClock().day(now), foreground: false, metered: false)
        #expect(change.transferred == [key: TransferBytes(received: 1_000, sent: 10)])
        #expect(core.advance(to: now).allSatisfy { if case .usage = $0 { false } else { true } }, "counted once")
    }
}
