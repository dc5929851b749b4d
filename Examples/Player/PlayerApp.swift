import Dispatch
import Foundation
import Offstage

/// The background-audio tutorial's music player: plays the playlist bundled beside it (`Playlist/*.wav`, in order,
/// round and round) with the playback category, so the music goes on when the user leaves the app, and prints the
/// track and time every second. When playback stops the system suspends it (SPEC MODE-1).
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--sleep-timer SECONDS`: pause after playing that long, as a music app's sleep timer does.
/// - `--mix`: play alongside other apps' audio (the mixWithOthers option) instead of interrupting it.
/// - `--category NAME`: another session category (ambient, soloAmbient … ; playback by default).
@MainActor
final class PlayerDelegate: ApplicationDelegate, AudioPlayerDelegate {
    let session = AudioSession.shared
    let tracks: [URL]
    let sleepTimer: Double?
    let options: AudioSession.CategoryOptions
    let category: AudioSession.Category
    var index = 0
    var player: AudioPlayer?
    var played = 0.0
    var ticker: DispatchSourceTimer?
    var outputShown = false
    var interruptionObserver: NSObjectProtocol?
    var systemEventObserver: NSObjectProtocol?

    init(arguments: [String]) {
        func value(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        sleepTimer = value("--sleep-timer").flatMap(Double.init)
        options = arguments.contains("--mix") ? [.mixWithOthers] : []
        category = value("--category").map(AudioSession.Category.init(rawValue:)) ?? .playback
        let folder = Application.bundleURL.appendingPathComponent("Playlist")
        tracks = ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension.lowercased() == "wav" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue)); \(tracks.count) tracks")
        do {
            try session.setCategory(category, options: self.options)
        } catch {
            say("audio session: \(error)")
        }
        interruptionObserver = NotificationCenter.default.addObserver(
            forName: AudioSession.interruptionNotification, object: nil, queue: nil
        ) { notification in
            let type = (notification.userInfo?[AudioSession.interruptionTypeKey] as? UInt).flatMap(AudioSession.InterruptionType.init)
            let options = AudioSession.InterruptionOptions(rawValue: notification.userInfo?[AudioSession.interruptionOptionKey] as? UInt ?? 0)
            let reason = notification.userInfo?[AudioSession.interruptionReasonKey] as? String ?? ""
            MainActor.assumeIsolated { self.interruption(type, options, reason) }
        }
        systemEventObserver = NotificationCenter.default.addObserver(
            forName: Application.systemEventNotification, object: nil, queue: nil
        ) { notification in
            let event = notification.userInfo?[Application.systemEventKey] as? String ?? "?"
            MainActor.assumeIsolated { self.say("system event: \(event)") }
        }
        let ticker = DispatchSource.makeTimerSource(queue: .main)
        ticker.schedule(deadline: .now() + 1, repeating: 1)
        ticker.setEventHandler { [weak self] in MainActor.assumeIsolated { self?.tick() } }
        ticker.resume()
        self.ticker = ticker
        return true
    }

    func applicationDidBecomeActive(_ application: Application) {
        say("did-become-active")
        if player?.isPlaying != true { play() }
    }

    func applicationWillResignActive(_ application: Application) { say("will-resign-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background; the music goes on") }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }
    func applicationWillTerminate(_ application: Application) { say("will-terminate") }

    func play() {
        guard !tracks.isEmpty else { return say("no tracks in \(Application.bundleURL.path)/Playlist") }
        do {
            if player == nil {
                player = try AudioPlayer(contentsOf: tracks[index])
                player?.delegate = self
            }
            try session.setActive(true)
            if player?.play() == true {
                say("playing \(tracks[index].lastPathComponent)")
                outputShown = false
            }
        } catch {
            say("cannot play: \(error)")
        }
    }

    func pause(_ why: String) {
        player?.pause()
        say("paused: \(why)")
    }

    nonisolated func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
        MainActor.assumeIsolated {
            index = (index + 1) % tracks.count
            self.player = nil
            play()
        }
    }

    func interruption(_ type: AudioSession.InterruptionType?, _ options: AudioSession.InterruptionOptions, _ reason: String) {
        switch type {
        case .began: say("interruption began (\(reason)): paused")
        case .ended:
            say("interruption ended (\(reason))\(options.contains(.shouldResume) ? ", resuming" : "")")
            if options.contains(.shouldResume) { play() }
        case nil: break
        }
    }

    func tick() {
        guard let player, player.isPlaying else { return }
        // The output is chosen as playback starts, on the player's thread: shown once it plays.
        if !outputShown {
            outputShown = true
            say("output: \(player.outputDescription)")
        }
        played += 1
        say("▶ \(tracks[index].lastPathComponent) \(clock(player.currentTime)) / \(clock(player.duration))")
        if let sleepTimer, played >= sleepTimer { pause("sleep timer of \(Int(sleepTimer)) s") }
    }

    func clock(_ seconds: Double) -> String { String(format: "%d:%02d", Int(seconds) / 60, Int(seconds) % 60) }
    func say(_ line: String) { print(timestamp() + " " + line) }
}

func timestamp() -> String {
    let formatter = DateFormatter()
    formatter.dateFormat = "HH:mm:ss.SSS"
    return formatter.string(from: Date())
}

@main
struct PlayerApp {
    @MainActor static func main() {
        Application.main(delegate: PlayerDelegate(arguments: Array(CommandLine.arguments.dropFirst())))
    }
}
