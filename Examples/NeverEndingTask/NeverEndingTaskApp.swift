import Foundation
import Offstage

/// A misbehaving app: it begins a background task when it leaves the foreground and never ends it, not even
/// in its expiration handler. The system terminates it when the background time is over and records why.
@MainActor
final class NeverEndingTaskDelegate: ApplicationDelegate {
    func applicationDidEnterBackground(_ application: Application) {
        let task = application.beginBackgroundTask(withName: "never-ends") {
            print("expiration handler called; ignoring it")
        }
        print("did-enter-background: began task \(task.rawValue) and will never end it")
    }
}

@main
struct NeverEndingTaskApp {
    @MainActor static func main() { Application.main(delegate: NeverEndingTaskDelegate()) }
}
