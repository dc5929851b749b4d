import COffstageSystem
import Glibc

/// A joinable pthread running a closure: `ExitWatcher` needs threads of its own that block in the kernel, which
/// must not sit on a Swift concurrency or NIO thread.
struct WatcherThread: Sendable {
    private final class Body: @unchecked Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    let handle: pthread_t

    /// Starts `body` on a new thread called `name` (at most 15 bytes, as Linux shows it in `ps -L`).
    init(name: String, _ body: @escaping @Sendable () -> Void) throws {
        let threadName = String(name.utf8.prefix(15)) ?? "offstage"
        let box = Unmanaged.passRetained(
            Body {
                _ = offstage_set_thread_name(threadName)
                body()
            }
        ).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            throw ProcessControlError.systemCallFailed(call: "pthread_create", target: name, errno: rc)
        }
        handle = thread
    }

    /// Whether the calling thread is this one.
    var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// Waits for the thread to finish.
    func join() {
        _ = pthread_join(handle, nil)
    }
}
