import Foundation
import Testing

@testable import Offstage

/// The player an audio app plays with in the background (SPEC MODE-1), on a recording output paced in real time.
@Suite("AudioPlayer (MODE-1)")
struct AudioPlayerTests {
    @Test("play() plays every frame in real time, then finishes: delegate on the main queue, rewound, not playing")
    func playsToTheEnd() async throws {
        let outputs = RecordingOutputs()
        let activity = AudioActivity()
        let builder = ramp(seconds: 0.3)
        let player = try makePlayer(builder, outputs: outputs, activity: activity)
        let recorder = DelegateRecorder()
        player.delegate = recorder
        let start = ContinuousClock.now
        #expect(player.play())
        #expect(player.isPlaying && activity.isPlaying)
        #expect(await eventually { await recorder.finished == [true] })
        #expect(ContinuousClock.now - start >= .milliseconds(295), "0.3 s of audio took at least 0.3 s")
        #expect(await recorder.allOnMainQueue)
        #expect(!player.isPlaying && !activity.isPlaying)
        #expect(player.currentTime == 0, "as AVAudioPlayer, the end rewinds")
        #expect(outputs.samples == (try WAVFile(bytes: Data(builder.bytes), url: player.url)).int16Samples)
        #expect(outputs.all.allSatisfy { $0.log.withLock { $0.closed } })
        #expect(player.outputDescription == "recording output")
        #expect(player.duration == 0.3 && player.numberOfChannels == 1)
    }

    @Test("currentTime advances while playing, never backwards and never beyond the duration")
    func currentTimeAdvances() async throws {
        let player = try makePlayer(ramp(seconds: 20), outputs: RecordingOutputs())
        player.play()
        var times: [TimeInterval] = []
        // Sampled until it has moved on by 0.2 s; on a loaded machine the playback thread may start late, so the
        // wait is bounded generously (5 s for 0.2 s of a 20 s track) rather than fixed.
        let until = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < until, (times.last ?? 0) < 0.2 {
            times.append(player.currentTime)
            try await Task.sleep(for: .milliseconds(5))
        }
        // Once more after the wait: a test task starved past its deadline still sees what the player's own thread did.
        times.append(player.currentTime)
        player.stop()
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "never backwards")
        #expect(times.allSatisfy { $0 >= 0 && $0 <= player.duration })
        #expect(times.last! >= 0.2, "playing moved it on (lower bound only): \(times.last!)")
    }

    @Test("pause() stops writing and keeps the position; play() resumes exactly there")
    func pauseAndResume() async throws {
        let outputs = RecordingOutputs()
        let activity = AudioActivity()
        let player = try makePlayer(ramp(seconds: 20), outputs: outputs, activity: activity)
        player.play()
        try await Task.sleep(for: .milliseconds(300))
        player.pause()
        #expect(!player.isPlaying && !activity.isPlaying)
        let paused = player.currentTime
        #expect(paused > 0)
        // The thread ends after the write under way: the output is closed and nothing more is written.
        #expect(await eventually { outputs.all.first?.log.withLock { $0.closed } == true })
        let written = outputs.samples.count
        try await Task.sleep(for: .milliseconds(100))
        #expect(outputs.samples.count == written)
        #expect(player.currentTime == paused)
        player.play()
        try #require(await eventually { outputs.all.count == 2 && !outputs.all[1].log.withLock { $0.samples.isEmpty } })
        player.stop()
        let resumedAt = try #require(outputs.all[1].log.withLock { $0.samples.first })
        #expect(Int(resumedAt) == Int((paused * 8000).rounded()) % 30000, "the first frame after resuming is where it paused")
    }

    @Test("stop() keeps currentTime, as AVAudioPlayer.stop() does; setting 0 rewinds")
    func stopKeepsPosition() async throws {
        let player = try makePlayer(ramp(seconds: 20), outputs: RecordingOutputs())
        player.play()
        try await Task.sleep(for: .milliseconds(200))
        player.stop()
        let stopped = player.currentTime
        #expect(stopped > 0 && !player.isPlaying)
        #expect(player.currentTime == stopped)
        player.currentTime = 0
        #expect(player.currentTime == 0)
    }

    @Test("Setting currentTime seeks, paused or playing; the buffered audio is flushed; values are clamped")
    func seeking() async throws {
        let outputs = RecordingOutputs()
        let player = try makePlayer(ramp(seconds: 2), outputs: outputs)
        player.currentTime = 0.5
        #expect(player.currentTime == 0.5)
        player.play()
        #expect(await eventually { !outputs.samples.isEmpty })
        #expect(outputs.samples.first == 4000, "playback starts at the seek")
        player.currentTime = 1.5
        #expect(player.currentTime >= 1.5, "a seek while playing is seen at once")
        #expect(await eventually { outputs.all[0].log.withLock { !$0.flushes.isEmpty } })
        #expect(await eventually { outputs.samples.last.map { $0 >= 12000 } == true })
        let log = outputs.all[0].log.withLock { $0 }
        #expect(log.samples[log.flushes[0]] == 12000, "after the flush, the writes go on from 1.5 s")
        player.stop()
        player.currentTime = 99
        #expect(player.currentTime == player.duration)
        player.currentTime = -3
        #expect(player.currentTime == 0)
    }

    @Test("numberOfLoops = 2 plays the file three times, then finishes")
    func loops() async throws {
        let outputs = RecordingOutputs()
        let builder = ramp(seconds: 0.2)
        let player = try makePlayer(builder, outputs: outputs)
        let recorder = DelegateRecorder()
        player.delegate = recorder
        player.numberOfLoops = 2
        let start = ContinuousClock.now
        player.play()
        #expect(await eventually { await recorder.finished == [true] })
        #expect(ContinuousClock.now - start >= .milliseconds(595))
        let once = try WAVFile(bytes: Data(builder.bytes), url: player.url).int16Samples
        #expect(outputs.samples == once + once + once)
    }

    @Test("numberOfLoops = -1 loops until stopped")
    func loopsForever() async throws {
        let outputs = RecordingOutputs()
        let player = try makePlayer(ramp(seconds: 0.1), outputs: outputs)
        player.numberOfLoops = -1
        player.play()
        #expect(await eventually { outputs.samples.count >= 4 * 800 }, "four passes of the 0.1 s file")
        #expect(player.isPlaying)
        player.stop()
        #expect(!player.isPlaying)
    }

    @Test("volume scales the samples and is clamped to 0...1")
    func volume() async throws {
        let outputs = RecordingOutputs()
        let player = try makePlayer(.pcm16([Int16](repeating: 10000, count: 800)), outputs: outputs)
        player.volume = 0.5
        let recorder = DelegateRecorder()
        player.delegate = recorder
        player.play()
        #expect(await eventually { await recorder.finished.count == 1 })
        #expect(outputs.samples == [Int16](repeating: 5000, count: 800))
        player.volume = 2
        #expect(player.volume == 1)
        player.volume = -1
        #expect(player.volume == 0)
    }

    @Test("When the output fails, the delegate hears a decode error, then an unsuccessful finish")
    func outputFailure() async throws {
        let activity = AudioActivity()
        let player = try makePlayer(ramp(seconds: 1), outputs: RecordingOutputs(failAfter: 3), activity: activity)
        let recorder = DelegateRecorder()
        player.delegate = recorder
        player.play()
        #expect(await eventually { await recorder.finished == [false] })
        let errors = await recorder.errors
        #expect(errors.count == 1 && errors[0].contains("unplugged by the test"))
        #expect(!player.isPlaying && !activity.isPlaying)
        #expect(abs(player.currentTime - 3 * 0.02) < 1e-9, "it stopped where the sound stopped: 3 writes of 20 ms")
    }

    @Test("A player the app lets go of stops and leaves the audio activity (MODE-1)")
    func droppedPlayerStops() async throws {
        let outputs = RecordingOutputs()
        let activity = AudioActivity()
        do {
            let player = try makePlayer(ramp(seconds: 5), outputs: outputs, activity: activity)
            player.play()
            #expect(activity.isPlaying)
            #expect(await eventually { !outputs.samples.isEmpty })
        }
        #expect(await eventually { !activity.isPlaying })
        #expect(await eventually { outputs.all.first?.log.withLock { $0.closed } == true })
    }

    @Test("play() of a file without frames returns false and plays nothing")
    func emptyFile() throws {
        let activity = AudioActivity()
        let player = try makePlayer(.pcm16([]), outputs: RecordingOutputs(), activity: activity)
        #expect(!player.play())
        #expect(!player.isPlaying && !activity.isPlaying)
    }

    @Test("play() while playing changes nothing and returns true")
    func playTwice() async throws {
        let outputs = RecordingOutputs()
        let player = try makePlayer(ramp(seconds: 1), outputs: outputs)
        #expect(player.play())
        #expect(player.play())
        try await Task.sleep(for: .milliseconds(100))
        player.stop()
        #expect(outputs.all.count == 1, "one thread, one output")
    }
}
