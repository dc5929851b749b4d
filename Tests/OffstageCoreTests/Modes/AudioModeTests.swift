import OffstageCore
import OffstageSimulator
import Testing

/// A music player: plays in the foreground when opened (playback, does not mix) and keeps playing.
private let player = AppBehavior().on("didBecomeActive", .playAudio(.playback, mixWithOthers: false, stopAfter: nil))

/// Apps A (the player) and B, with the modes given.
private func audioSimulation(
    a modes: Set<BackgroundMode> = [.audio], behavior: AppBehavior = player, b: AppBehavior = .init(),
    bModes: Set<BackgroundMode> = [.audio]
) -> Simulation {
    var simulation = Simulation()
    simulation.install(manifest(appA, modes: modes), behavior: behavior)
    simulation.install(manifest(appB, modes: bModes), behavior: b)
    return simulation
}

@Suite("Audio in the background (SPEC MODE-1)")
struct AudioModeTests {
    @Test("MODE-1: a playing app keeps running in the background, and `audio` is its active mode")
    func playingKeepsRunning() throws {
        var sim = audioSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(600))
        #expect(sim.state(of: appA) == .background)
        #expect(sim.status(of: appA)?.activeModes == [.audio])
        #expect(!sim.trace(of: appA).contains { $0.event == .frozen })
    }

    @Test("MODE-1, LC-4: once playback stops the app is suspended after the suspend delay")
    func stopsThenSuspended() throws {
        let behavior = AppBehavior().on("didBecomeActive", .playAudio(.playback, mixWithOthers: false, stopAfter: .seconds(20)))
        var sim = audioSimulation(behavior: behavior)
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(19))
        #expect(sim.state(of: appA) == .background)
        sim.run(for: .seconds(5))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.status(of: appA)?.activeModes == [])
        // Playing started 0.1 s after the launch began (when did-become-active ran) and stopped 20 s later.
        let frozen = try #require(sim.seconds(from: start, to: .frozen, of: appA))
        #expect(frozen > 19.8 && frozen < 21.2)
        #expect(sim.logLines(of: appA, .mode).contains("audio stopped"))
    }

    @Test("MODE-6: playing without the `audio` mode gives no background time, and the status says why")
    func undeclaredModeGivesNoTime() throws {
        var sim = audioSimulation(a: [])
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .milliseconds(500))
        // Before the freeze: the player plays, but the mode is denied, naming the fix.
        let holds = try #require(sim.status(of: appA)?.modeHolds)
        #expect(holds.map(\.verdict) == [.denied])
        #expect(holds.first?.reason.contains("'audio' is not in UIBackgroundModes") == true)
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
    }

    @Test("MODE-1: the ambient and solo-ambient categories stop in the background even with the mode")
    func foregroundOnlyCategories() throws {
        for category in [AudioSessionCategory.ambient, .soloAmbient] {
            let behavior = AppBehavior().on("didBecomeActive", .playAudio(category, mixWithOthers: false, stopAfter: nil))
            var sim = audioSimulation(behavior: behavior)
            try sim.openAndSettle(appA)
            sim.home()
            sim.run(for: .seconds(3))
            #expect(sim.state(of: appA) == .suspended, "category \(category)")
        }
    }

    @Test("MODE-1: the foreground app wins the audio: a background session that does not mix is told, then suspended")
    func foregroundWins() throws {
        var sim = audioSimulation(b: player)
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(5))
        #expect(sim.state(of: appA) == .background)
        let opened = sim.now
        try sim.openAndSettle(appB)
        sim.run(for: .seconds(3))
        #expect(sim.events(of: appA, since: opened) == [.callback("audioInterruption"), .frozen])
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.core.modes.audio.session(of: appA)?.interruption?.by == .app(appB))
        #expect(sim.status(of: appB)?.activeModes == [.audio])
    }

    @Test("MODE-1: a session that mixes with others keeps playing beside the foreground app's audio")
    func mixingSessionsPlayTogether() throws {
        let mixer = AppBehavior().on("didBecomeActive", .playAudio(.playback, mixWithOthers: true, stopAfter: nil))
        var sim = audioSimulation(behavior: mixer, b: player)
        try sim.openAndSettle(appA)
        sim.home()
        try sim.openAndSettle(appB)
        sim.run(for: .seconds(10))
        #expect(sim.state(of: appA) == .background)
        #expect(!sim.callbacks(of: appA).contains("audioInterruption"))
    }

    @Test("MODE-1: a background app cannot interrupt the foreground app's audio; the refusal names the fix")
    func backgroundCannotInterruptForeground() throws {
        // B finishes work in the background (a task keeps it running) while A, in front, plays audio that does not mix.
        let worker = AppBehavior().on("didEnterBackground", .beginTask(name: "work", endAfter: nil))
        var sim = audioSimulation(b: worker)
        try sim.openAndSettle(appB)
        sim.home()
        try sim.openAndSettle(appA)
        #expect(sim.state(of: appB) == .background)
        let pidB = try #require(sim.core.apps[appB]?.process?.pid)
        var core = sim.core
        do {
            _ = try core.setAudioSession(appB, pid: pidB, AudioSessionRequest(category: .playback, active: true), at: sim.now)
            Issue.record("a background app took the audio from the foreground app")
        } catch {
            #expect(error.code == .cannotInterruptOthers)
            #expect(error.message.contains("'\(appA)' is in the foreground"))
            #expect(error.fix.contains("mixWithOthers"))
        }
        #expect(core.modes == sim.core.modes)
        #expect(core.modes.audio.session(of: appA)?.active == true)
        // Mixing, it may play alongside.
        _ = try core.setAudioSession(
            appB, pid: pidB, AudioSessionRequest(category: .playback, mixWithOthers: true, active: true), at: sim.now)
        #expect(core.modes.audio.session(of: appA)?.active == true)
    }

    @Test("MODE-1: an incoming call interrupts every session; when it ends the player is woken and plays again")
    func systemInterruption() throws {
        var sim = audioSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        try sim.audioInterruption(began: true)
        sim.run(for: .seconds(3))
        #expect(sim.state(of: appA) == .suspended)
        let ended = sim.now
        try sim.audioInterruption(began: false)
        sim.run(for: .seconds(10))
        #expect(sim.events(of: appA, since: ended) == [.thawed, .callback("audioInterruption")])
        #expect(sim.state(of: appA) == .background)
        #expect(sim.status(of: appA)?.activeModes == [.audio])
        #expect(throws: CoreError.self) { try sim.audioInterruption(began: false) }
    }

    @Test("SET-2: with background activity off, audio the user started plays on; audio begun in the background does not")
    func backgroundActivityOff() throws {
        var settings = AppSettings()
        settings.backgroundActivity = false
        var sim = audioSimulation()
        try sim.setAppSettings(settings, for: appA)
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(10))
        #expect(sim.state(of: appA) == .background)

        // B starts playing only once in the background (in did-enter-background): nothing the user started.
        let lateStarter = AppBehavior().on("didEnterBackground", .playAudio(.playback, mixWithOthers: true, stopAfter: nil))
        var other = audioSimulation(behavior: lateStarter)
        try other.setAppSettings(settings, for: appA)
        try other.openAndSettle(appA)
        other.home()
        other.run(for: .seconds(3))
        #expect(other.state(of: appA) == .suspended)
    }

    @Test("LC-6: force-quit ends the audio with the process; the app is not held and leaves no session behind")
    func forceQuitEndsAudio() throws {
        var sim = audioSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        try sim.forceQuit(appA)
        sim.run(for: .seconds(1))
        #expect(sim.state(of: appA) == .notRunning)
        #expect(sim.core.modes.audio.session(of: appA) == nil)
    }

    @Test("MODE-1: an app that was interrupted hears the end when the interrupting app deactivates and notifies others")
    func deactivationNotifiesOthers() throws {
        var sim = audioSimulation(b: player)
        try sim.openAndSettle(appA)
        sim.home()
        try sim.openAndSettle(appB)
        sim.run(for: .seconds(3))
        #expect(sim.state(of: appA) == .suspended)
        let ended = sim.now
        try sim.setAudioPlaying(appB, false)
        try sim.setAudioSession(appB, AudioSessionRequest(category: .playback, active: false, notifyOthersOnDeactivation: true))
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: ended).prefix(2) == [.thawed, .callback("audioInterruption")])
        #expect(sim.status(of: appA)?.activeModes == [.audio])
    }

    @Test("MODE-1: audio calls from a process that is not the app's are refused and change nothing")
    func foreignProcessRefused() throws {
        var sim = audioSimulation()
        try sim.openAndSettle(appA)
        var core = sim.core
        #expect(throws: CoreError.self) {
            _ = try core.setAudioSession(appA, pid: 999_999, AudioSessionRequest(category: .playback, active: true), at: sim.now)
        }
        #expect(throws: CoreError.self) { _ = try core.setAudioPlaying(appA, pid: 999_999, playing: false, at: sim.now) }
        #expect(core.modes == sim.core.modes)
    }
}
