import COffstageSystem
import Glibc
import Synchronization

/// SIGTERM and SIGINT, heard without libdispatch (§11: an idle daemon wakes 0 times). A dispatch signal source — what
/// swift-service-lifecycle's `gracefulShutdownSignals` uses — starts libdispatch's manager thread, whose workqueue
/// monitor then wakes the process every second for as long as it lives. Here a plain handler adds 1 to an eventfd, and
/// a thread of its own, asleep in poll(2) until then, calls the handler given.
public final class ShutdownSignals: Sendable {
    private let eventfd: Int32
    private let stopping: Int32
    private let thread: Mutex<WatcherThread?>

    /// Installs the handlers and starts the thread; `onSignal` runs on that thread at each SIGTERM or SIGINT.
    public init(onSignal: @escaping @Sendable () -> Void) throws {
        let syscalls = Syscalls.live
        eventfd = try syscalls.eventfdCreate()
        stopping = try syscalls.eventfdCreate()
        guard offstage_signal_eventfd_on_shutdown(eventfd) == 0 else {
            let error = ProcessControlError.systemCallFailed(call: "sigaction", target: "SIGTERM, SIGINT", errno: Glibc.errno)
            syscalls.close(eventfd)
            syscalls.close(stopping)
            throw error
        }
        let (signals, stop) = (eventfd, stopping)
        thread = Mutex(try WatcherThread(name: "offstage-signal") {
            var watched = [pollfd(fd: signals, events: Int16(POLLIN), revents: 0), pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
            while true {
                let ready = watched.withUnsafeMutableBufferPointer { poll($0.baseAddress, 2, -1) }
                if ready < 0 && Glibc.errno == EINTR { continue }
                if ready < 0 || watched[1].revents != 0 { return }
                if watched[0].revents != 0 {
                    syscalls.eventfdDrain(signals)
                    onSignal()
                }
            }
        })
    }

    /// Ends the thread (the handlers stay: a later signal only adds to the eventfd).
    public func stop() {
        guard let thread = thread.withLock({ $0.take() }) else { return }
        Syscalls.live.eventfdSignal(stopping)
        guard !thread.isCurrent else { return }
        thread.join()
        // The signals' eventfd stays open: the handlers may still write to it.
        Syscalls.live.close(stopping)
    }
}
