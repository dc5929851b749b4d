import Dispatch
import Foundation
import Offstage

/// A photo viewer that keeps the photos it has decoded in memory, as image apps do: each photo opened costs its
/// decoded size, and the cache only grows while the viewer is in front. The manifest gives it a memory limit
/// (`OffstageLinux.MemoryLimitMB`): on a device whose kernel has a memory controller, a viewer that outgrows it is ended
/// by the kernel, and `offstage apps` says it "exceeded its memory limit". On a memory warning it lets go of every photo
/// but the one on screen.
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--photo-mb N`: the decoded size of one photo, in MiB (default 8).
/// - `--at-launch K`: photos opened at launch (default 1).
/// - `--open-every SECONDS`: while in front, open one more photo this often (default: never).
/// - `--max-photos N`: open no more than this many (default: no limit).
/// - `--keep-on-warning`: a slideshow that needs every photo it has: a memory warning frees nothing.
@MainActor
final class PhotoViewerDelegate: ApplicationDelegate {
    let photoBytes: Int
    let atLaunch: Int
    let openEvery: Double?
    let maxPhotos: Int
    let keepOnWarning: Bool
    /// The decoded photos: every page written, so each really takes its size.
    var cache: [[UInt8]] = []
    var timer: DispatchSourceTimer?

    init(arguments: [String]) {
        func value(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        photoBytes = (value("--photo-mb").flatMap(Int.init) ?? 8) << 20
        atLaunch = value("--at-launch").flatMap(Int.init) ?? 1
        openEvery = value("--open-every").flatMap(Double.init)
        maxPhotos = value("--max-photos").flatMap(Int.init) ?? .max
        keepOnWarning = arguments.contains("--keep-on-warning")
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        for _ in 0..<atLaunch { openPhoto() }
        say("did-finish-launching (\(options.reason.rawValue)); \(cache.count) photos decoded, \(megabytes) MB")
        return true
    }

    func applicationDidBecomeActive(_ application: Application) {
        say("did-become-active")
        guard let openEvery, timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + openEvery, repeating: openEvery)
        timer.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                guard let self, self.cache.count < self.maxPhotos else { return }
                self.openPhoto()
                self.say("opened photo \(self.cache.count): \(self.megabytes) MB decoded")
            }
        }
        timer.resume()
        self.timer = timer
    }

    func applicationWillResignActive(_ application: Application) {
        say("will-resign-active")
        timer?.cancel()
        timer = nil
    }

    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background; \(megabytes) MB decoded") }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }
    func applicationWillTerminate(_ application: Application) { say("will-terminate") }

    /// Memory is short: the photos off screen are decoded again when the user comes back to them; the one on screen
    /// stays.
    func applicationDidReceiveMemoryWarning(_ application: Application) {
        let before = megabytes
        if cache.count > 1 && !keepOnWarning { cache.removeFirst(cache.count - 1) }
        say("did-receive-memory-warning: freed \(before - megabytes) MB, \(megabytes) MB decoded")
    }

    /// Decodes one more photo: a buffer of its size with every byte written (a pattern, not zeros the kernel could
    /// leave unbacked).
    func openPhoto() {
        let seed = UInt8(truncatingIfNeeded: cache.count &+ 1)
        cache.append([UInt8](unsafeUninitializedCapacity: photoBytes) { buffer, count in
            for index in 0..<photoBytes { buffer[index] = seed &+ UInt8(truncatingIfNeeded: index) }
            count = photoBytes
        })
    }

    var megabytes: Int { cache.count * photoBytes >> 20 }

    func say(_ text: String) { print(timestamp() + " " + text) }
}

func timestamp() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var time = tm()
    var seconds = now.tv_sec
    localtime_r(&seconds, &time)
    return String(format: "%02d:%02d:%02d.%03d", time.tm_hour, time.tm_min, time.tm_sec, now.tv_nsec / 1_000_000)
}

@main
struct PhotoViewerApp {
    @MainActor static func main() {
        Application.main(delegate: PhotoViewerDelegate(arguments: CommandLine.arguments))
    }
}
