import Foundation
import Offstage

/// An app that opts out of the background (`UIApplicationExitsOnSuspend`): leaving the foreground terminates
/// it, so it saves its state in will-terminate. Pass `--hang-on-terminate` to see the 5 s watchdog kill it.
@MainActor
final class ExitsOnSuspendDelegate: ApplicationDelegate {
    let hangsOnTerminate = CommandLine.arguments.contains("--hang-on-terminate")

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        let launches = (DurableStore.standard.value(Int.self, forKey: "launches") ?? 0) + 1
        try? DurableStore.standard.set(launches, forKey: "launches")
        print("did-finish-launching (\(options.reason.rawValue)), launch number \(launches)")
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { print("did-become-active") }
    func applicationWillResignActive(_ application: Application) { print("will-resign-active") }
    func applicationDidEnterBackground(_ application: Application) { print("did-enter-background (never expected)") }

    func applicationWillTerminate(_ application: Application) {
        try? DurableStore.standard.set(Date().timeIntervalSince1970, forKey: "lastExit")
        print("will-terminate: state saved")
        if hangsOnTerminate { while true { sleep(60) } }
    }
}

@main
struct ExitsOnSuspendApp {
    @MainActor static func main() { Application.main(delegate: ExitsOnSuspendDelegate()) }
}
