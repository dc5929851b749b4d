import Glibc

/// A mutex with a condition variable around some state: what `Synchronization.Mutex` lacks for a thread that
/// must sleep until another thread changes the state.
final class LockedCondition<State>: @unchecked Sendable {
    // Heap-allocated because pthread objects must not move, which Swift properties may.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Only touched with `mutex` held: that is what makes the class Sendable.
    private var state: State

    init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the lock held.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Sleeps, with the lock released, while `condition` is true; `condition` runs with the lock held and may
    /// update the state (for example to say that someone is waiting).
    func wait(while condition: (inout State) -> Bool) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while condition(&state) {
            pthread_cond_wait(self.condition, mutex)
        }
    }

    /// Wakes every waiter so it re-checks its condition.
    func broadcast() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}
