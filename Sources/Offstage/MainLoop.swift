import COffstageSystem
import Dispatch
import Foundation
import OffstageProtocol

/// The app's main thread: one `poll()` on the callback stream and on the main dispatch queue's wake-up descriptor.
///
/// A callback is read and handed to the delegate by the main thread itself, so the daemon's write wakes exactly one
/// thread of the app. (A reader thread that re-queued each callback on the main queue woke two, and a lifecycle
/// transition is a chain of callbacks, each waiting for the previous one's answer.) Work queued on the main queue
/// and the main actor — `DispatchQueue.main.async`, `Task { @MainActor in … }`, timers — runs on this thread too,
/// between callbacks, as on iOS where the main run loop serves both.
enum MainLoop {
    /// Runs the loop; never returns. `handle` gets every callback, in the order the daemon sent them.
    @MainActor
    static func run(link: DaemonLink, handle: @MainActor (AppInterface.CallbackMessage) -> Void) -> Never {
        let queueDescriptor = _dispatch_get_main_queue_handle_4CF()
        var descriptors = [pollfd](repeating: pollfd(), count: 2)
        var current: AttachedStream?
        while true {
            let stream = link.attachedStream()
            if let stream, stream !== current {
                // A stream just attached: callbacks that came with its first reply, read by the attach thread, then
                // any that arrived in the same read and wait in the connection's buffer, where poll() cannot see them.
                current = stream
                for callback in stream.takeEarlyCallbacks() { handle(callback) }
                readCallbacks(stream, link: link, handle: handle)
                continue
            }
            descriptors[0] = pollfd(fd: queueDescriptor, events: Int16(POLLIN), revents: 0)
            descriptors[1] = pollfd(fd: stream?.connection.fileDescriptor ?? -1, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 { continue }  // EINTR: a signal's handler ran
            if descriptors[0].revents != 0 {
                var count: UInt64 = 0
                _ = read(queueDescriptor, &count, MemoryLayout<UInt64>.size)
                _dispatch_main_queue_callback_4CF(nil)
            }
            if let stream, descriptors[1].revents != 0 {
                readCallbacks(stream, link: link, handle: handle)
            }
        }
    }

    /// Hands every callback that has arrived to `handle`; when the stream has ended or failed, gives it back to the
    /// attach thread, which reconnects.
    @MainActor
    private static func readCallbacks(
        _ stream: AttachedStream, link: DaemonLink, handle: @MainActor (AppInterface.CallbackMessage) -> Void
    ) {
        do {
            while true {
                switch try stream.replies.nextIfReady() {
                case .reply(let reply):
                    if let callback = reply.callback { handle(callback) }
                case .notYet:
                    return
                case .ended:
                    link.streamEnded(stream)
                    return
                }
            }
        } catch {
            link.streamEnded(stream)
        }
    }
}
