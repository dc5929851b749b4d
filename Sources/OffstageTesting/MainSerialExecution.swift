import Foundation

/// While a ``TestDevice`` lives, the jobs of Swift's global executor run on the main actor, one at a time, in order.
///
/// An app's handlers often start work in a `Task` (`Task { try await center.add(request) }`); on the global executor
/// that work runs on other threads, whenever they get to it, and a test could look before it ran. On the main actor it
/// runs when the test's driver yields, so ``TestDevice/runUntilIdle()`` lets it finish before time moves on, and a
/// test sees the same order every run. This is the runtime's enqueue hook (`swift_task_enqueueGlobal_hook`), as
/// test libraries for Swift concurrency use it; where the runtime lacks the hook, tasks run as usual and the kit
/// waits for callbacks only.
enum MainSerialExecution {
    typealias Original = @convention(thin) (UnownedJob) -> Void
    typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// The runtime's hook variable, if it has one.
    nonisolated(unsafe) private static let hook: UnsafeMutablePointer<Hook?>? = dlsym(
        dlopen(nil, RTLD_LAZY), "swift_task_enqueueGlobal_hook"
    ).map { $0.assumingMemoryBound(to: Hook?.self) }

    /// Sends the global executor's jobs to the main actor.
    static func begin() {
        hook?.pointee = { job, _ in MainActor.shared.enqueue(job) }
    }

    /// Lets the global executor run its jobs again.
    static func end() {
        hook?.pointee = nil
    }
}
