import Foundation
import Offstage
import OffstageTesting
import Testing

@testable import Player

/// The Player example's own tests, as its developer would write them with the test kit: its real delegate, its
/// `Info.plist` and the playlist beside it, on virtual time, with no daemon and nothing heard (SPEC MODE-1).
@Suite("Player, tested with OffstageTesting (KIT-1, MODE-1)")
@MainActor
struct PlayerTests {
    static let infoPlist = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/Player/Info.plist")

    /// The player installed and opened: it plays the first track of its playlist.
    static func playing() async throws -> (TestDevice, TestApp, PlayerDelegate) {
        let device = await TestDevice()
        let app = try device.install(infoPlist: infoPlist) { PlayerDelegate(arguments: []) }
        try await device.open(app)
        let player = try #require(app.delegate as? PlayerDelegate)
        #expect(player.tracks.map(\.lastPathComponent) == ["01-sunrise.wav", "02-tide.wav", "03-lanterns.wav"])
        #expect(app.isPlayingAudio)
        #expect(app.audioSession == "playback, active, playing")
        return (device, app, player)
    }

    @Test("MODE-1: playing, the music goes on when the user leaves: the app runs in the background for hours, never suspended")
    func playsInTheBackground() async throws {
        let (device, app, _) = try await Self.playing()
        try await device.home()
        try await device.lock()
        try await device.advance(by: .seconds(3 * 3600))
        #expect(app.state == .background)
        #expect(!app.wasSuspended)
        #expect(app.isPlayingAudio)
        #expect(app.memoryBand == "background-user", "playing for the user: ended after apps working for themselves")
    }

    @Test("MODE-1: a call interrupts it in the background: its players are paused at once and it is suspended; when the call ends it hears it may resume, and plays on in the background")
    func interruptedByACall() async throws {
        let (device, app, player) = try await Self.playing()
        try await device.home()
        try await device.beginAudioInterruption()
        #expect(player.player?.isPlaying == false, "paused by the SDK as the interruption began")
        #expect(!app.isPlayingAudio)
        #expect(app.audioSession == "playback, interrupted by an incoming call (a system interruption), inactive")
        try await device.advance(by: .seconds(10 * 60))
        #expect(app.isSuspended, "nothing plays: suspended while the call lasts")
        #expect(app.memoryBand == "suspended")
        try await device.endAudioInterruption()
        #expect(player.player?.isPlaying == true, "resumed on shouldResume")
        #expect(app.isPlayingAudio)
        #expect(app.state == .background, "woken to resume, and kept running while it plays")
        try await device.advance(by: .seconds(3600))
        #expect(app.state == .background)
    }

    @Test("MODE-1: paused by the user's sleep timer, the app is suspended once its time to finish is over")
    func suspendedOncePaused() async throws {
        let (device, app, player) = try await Self.playing()
        try await device.home()
        player.pause("the test's sleep timer")
        try await device.runUntilIdle()
        #expect(!app.isPlayingAudio)
        try await device.advance(by: .seconds(60))
        #expect(app.isSuspended)
    }
}
