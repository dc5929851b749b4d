import Foundation
import Offstage

/// A misbehaving app whose did-enter-background never returns (it blocks the main thread). The system's
/// watchdog terminates it after 5 s and records why.
@MainActor
final class HangingBackgroundDelegate: ApplicationDelegate {
    func applicationDidEnterBackground(_ application: Application) {
        print("did-enter-background: blocking the main thread forever")
        while true { sleep(60) }
    }
}

@main
struct HangingBackgroundApp {
    @MainActor static func main() { Application.main(delegate: HangingBackgroundDelegate()) }
}
