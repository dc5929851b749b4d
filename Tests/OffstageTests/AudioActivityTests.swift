import Synchronization
import Testing

@testable import Offstage

/// How the SDK learns that the app plays audio, to tell the daemon (SPEC MODE-1).
@Suite("AudioActivity (MODE-1)")
struct AudioActivityTests {
    /// Collects what an observer hears.
    final class Heard: Sendable {
        /// The values, in order.
        let values = Mutex([Bool]())
        /// The observer.
        var observer: @Sendable (Bool) -> Void { { value in self.values.withLock { $0.append(value) } } }
        /// The values so far.
        var all: [Bool] { values.withLock { $0 } }
    }

    /// Two objects kept alive for the test, so their identities stay distinct (any objects will do: the activity
    /// only compares them).
    let objects = (Heard(), Heard())
    /// A player's identity.
    var first: ObjectIdentifier { ObjectIdentifier(objects.0) }
    /// Another player's identity.
    var second: ObjectIdentifier { ObjectIdentifier(objects.1) }

    @Test("The observer hears only the changes between none playing and some playing, in order")
    func transitions() {
        let activity = AudioActivity()
        let heard = Heard()
        activity.setObserver(heard.observer)
        #expect(!activity.isPlaying)
        activity.playerDidStart(first)
        #expect(activity.isPlaying && heard.all == [true])
        activity.playerDidStart(second)
        activity.playerDidStart(first)
        activity.playerDidStop(first)
        #expect(activity.isPlaying && heard.all == [true], "one still plays")
        activity.playerDidStop(second)
        #expect(!activity.isPlaying && heard.all == [true, false])
        activity.playerDidStop(second)
        #expect(heard.all == [true, false], "stopping a stopped player is no change")
        activity.setObserver(nil)
        activity.playerDidStart(first)
        #expect(heard.all == [true, false], "a removed observer hears nothing")
    }

    @Test("Players report to the activity: play, pause, end")
    func playersReport() async throws {
        let activity = AudioActivity()
        let heard = Heard()
        activity.setObserver(heard.observer)
        let player = try makePlayer(ramp(seconds: 0.2), outputs: RecordingOutputs(), activity: activity)
        player.play()
        player.pause()
        player.play()
        #expect(await eventually { !player.isPlaying })
        #expect(heard.all == [true, false, true, false])
    }

    @Test("pauseAll() pauses every playing player and counts them (an interruption, as on iOS)")
    func pauseAll() throws {
        let activity = AudioActivity()
        let heard = Heard()
        activity.setObserver(heard.observer)
        let players = try (0..<3).map { _ in
            try makePlayer(ramp(seconds: 5), outputs: RecordingOutputs(), activity: activity)
        }
        players[0].play()
        players[1].play()
        #expect(activity.pauseAll() == 2)
        #expect(players.allSatisfy { !$0.isPlaying })
        #expect(!activity.isPlaying && heard.all == [true, false])
        #expect(activity.pauseAll() == 0)
    }

    @Test("An observer may pause the players itself without deadlock; the last change it hears is the state")
    func reentrantObserver() throws {
        let activity = AudioActivity()
        let heard = Heard()
        activity.setObserver { playing in
            heard.observer(playing)
            if playing { activity.pauseAll() }
        }
        let player = try makePlayer(ramp(seconds: 5), outputs: RecordingOutputs(), activity: activity)
        player.play()
        #expect(!player.isPlaying && !activity.isPlaying)
        #expect(heard.all == [true, false])
    }
}
