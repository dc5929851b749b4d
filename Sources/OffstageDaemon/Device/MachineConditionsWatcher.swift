import COffstageSystem
import Glibc
import OffstageCore
import Synchronization

/// Keeps the machine's power and network reading current without polling: reads both at start, then re-reads
/// only when the kernel announces a change, and hands each changed reading to a handler. Memory pressure is read
/// when one of its ``PressureWakeUp``s says it may have risen (PSI triggers, the app memory budget's usage
/// thresholds). The rest of memory pressure's story (relief, which a PSI trigger does not announce) and the thermal
/// state (thermal events need generic netlink and a configured governor) are read with every re-read, and with a
/// `pressurePollInterval` also at that interval — but only while the daemon wants them (``readPressure(_:)``: while
/// something it decides depends on them), so that an idle device is never woken to read two files.
///
/// The kernel speaks through two netlink sockets, both opened before the first reading so no change between the
/// two can be missed:
/// - NETLINK_KOBJECT_UEVENT (the kernel's device events): an event of the `power_supply` subsystem (a cable
///   plugged, a battery's state or alarm level changing) triggers a re-read; events of other subsystems (a USB
///   stick, a disk) wake the thread only to be read and dropped, as the kernel sends every subsystem's events to
///   the one multicast group.
/// - NETLINK_ROUTE subscribed to RTMGRP_LINK, RTMGRP_IPV4_IFADDR and RTMGRP_IPV6_IFADDR: any link appearing,
///   going up or down, or any address added or removed triggers a re-read.
///
/// One thread blocks in poll(2) on both sockets and an eventfd that `shutdown()` and ``readPressure(_:)`` write.
/// While pressure is not wanted (or there is no poll interval) there is no timer and no timeout: while nothing
/// changes the thread does not run at all; while it is wanted, it wakes at that interval only to read two small
/// files. All messages already queued are read
/// before one re-read, so a burst (a link coming up brings a link message and several address messages) costs one
/// reading. A socket overflow (ENOBUFS: messages were lost) also triggers a re-read, since the files are the
/// truth and messages only say when to look.
///
/// A consequence of not polling: the battery level follows the kernel's events. Most batteries (ACPI ones
/// included) announce charging changes and alarm levels but not every percent, so between events the level can
/// lag (UPower polls for this reason; the daemon chooses not to). Every re-read, whatever its trigger, refreshes
/// the level too.
///
/// The handler runs on the watcher's thread, one call at a time, only when the reading differs from the last
/// one; it should hand the reading on quickly. Call `shutdown()` to stop: until then the thread keeps the watcher
/// alive.
public final class MachineConditionsWatcher: Sendable {
    /// Receives each changed reading.
    public typealias Handler = @Sendable (MachineReading) -> Void

    /// What the watcher's thread and its callers share.
    private struct State {
        /// The latest reading.
        var current: MachineReading
        /// Set by `shutdown()` (or by the thread when it ends).
        var stopping = false
        /// Set once the thread has closed the sockets and the eventfd.
        var descriptorsClosed = false
        /// The watcher thread's kernel id, once it runs.
        var threadID: Int32?
        /// Re-reads after kernel messages: for tests that check what woke the thread.
        var rereadCount = 0
        /// Kernel messages received, of any subsystem: likewise.
        var kernelMessageCount = 0
        /// Whether the daemon wants memory pressure and the thermal state read at the poll interval.
        var pressureWanted = false
        /// Pressure readings taken at the poll interval: for tests that check it stops.
        var pressureReadCount = 0
        /// A source without a kernel event (NetworkManager) changed: the machine is read again.
        var rereadWanted = false
        /// Readings of memory pressure the kernel's wake-ups triggered: for tests and figures.
        var pressureWakeUpCount = 0
    }

    /// Where readings come from.
    public let reader: MachineConditionsReader
    /// Seconds between readings of memory pressure and the thermal state; nil reads them only with power and network.
    public let pressurePollInterval: Double?
    /// What the kernel makes ready when memory pressure may have risen; closed when the watcher stops.
    let wakeUps: [PressureWakeUp]

    /// Receives changed readings.
    private let handler: Handler
    /// Closing descriptors, signalling the eventfd, the thread id.
    private let syscalls = Syscalls.live
    /// The NETLINK_KOBJECT_UEVENT socket.
    private let ueventSocket: Int32
    /// The NETLINK_ROUTE socket.
    private let routeSocket: Int32
    /// The eventfd that `shutdown()` writes to end the thread's wait.
    private let wake: Int32
    /// Shared state.
    private let state: Mutex<State>
    /// The thread, until `shutdown()` joins it.
    private let thread = Mutex<WatcherThread?>(nil)

    /// Opens the kernel sockets, takes the first reading (see `current`) and starts the watcher's thread. The
    /// handler is not called for the first reading, only for later changes.
    public convenience init(
        reader: MachineConditionsReader = MachineConditionsReader(), pressurePollInterval: Double? = nil,
        onChange handler: @escaping Handler
    ) throws {
        try self.init(reader: reader, pressurePollInterval: pressurePollInterval, wakeUps: [], onChange: handler)
    }

    /// The same, also reading memory pressure whenever one of `wakeUps` is ready; the watcher owns their descriptors
    /// from here on (closed when it stops, or at once if it cannot start).
    init(
        reader: MachineConditionsReader, pressurePollInterval: Double?, wakeUps: [PressureWakeUp],
        onChange handler: @escaping Handler
    ) throws {
        self.wakeUps = wakeUps
        self.reader = reader
        self.pressurePollInterval = pressurePollInterval.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        self.handler = handler
        var opened: [Int32] = []
        func open(_ make: () -> Int32, failure: (Int32) -> MachineConditionsWatcherError) throws -> Int32 {
            let fd = make()
            guard fd >= 0 else {
                let error = failure(Glibc.errno)
                (opened + wakeUps.map(\.fd)).forEach { _ = Glibc.close($0) }
                throw error
            }
            opened.append(fd)
            return fd
        }
        ueventSocket = try open(offstage_uevent_socket) {
            .cannotOpenNetlinkSocket(purpose: "kernel device events (NETLINK_KOBJECT_UEVENT)", errno: $0)
        }
        routeSocket = try open(offstage_route_change_socket) {
            .cannotOpenNetlinkSocket(purpose: "link and address changes (NETLINK_ROUTE)", errno: $0)
        }
        wake = try open(offstage_eventfd) { .cannotCreateWakeUp(errno: $0) }
        state = Mutex(State(current: reader.read()))
        do {
            // Created with the lock held, so a shutdown() from the handler (on the new thread) finds the handle.
            try thread.withLock { handle in
                handle = try WatcherThread(name: "offstage-device") { [self] in run() }
            }
        } catch {
            closeDescriptors()
            throw MachineConditionsWatcherError.cannotStartThread(errno: (error as? ProcessControlError)?.errno ?? 0)
        }
    }

    /// The latest reading.
    public var current: MachineReading {
        state.withLock { $0.current }
    }

    /// Stops the thread and closes the sockets; returns once the thread has finished (after a handler call in
    /// progress, if any). From inside the handler it returns at once, and the thread finishes when the handler
    /// returns. Calling it again does nothing. Changes after shutdown are not reported.
    public func shutdown() {
        let first = state.withLock { state in
            guard !state.stopping else { return false }
            state.stopping = true
            // Under the lock: the thread closes the eventfd under the same lock, so this never writes to a closed
            // (or reused) descriptor.
            if !state.descriptorsClosed { syscalls.eventfdSignal(wake) }
            return true
        }
        guard first, let thread = thread.withLock({ $0.take() }) else { return }
        if thread.isCurrent {
            // A thread cannot join itself; detached, it frees its resources when it ends.
            _ = pthread_detach(thread.handle)
        } else {
            thread.join()
        }
    }

    /// Whether memory pressure and the thermal state are read at the poll interval (SPEC SCH-11, §11 idle): the
    /// daemon wants them while something it decides depends on them (continued-processing work queued or running).
    /// Turning it on reads them at once, then at the interval; turning it off stops the timer, so the thread sleeps
    /// until the kernel says something. Without a poll interval it changes nothing.
    public func readPressure(_ wanted: Bool) {
        state.withLock { state in
            guard state.pressureWanted != wanted, !state.stopping else { return }
            state.pressureWanted = wanted
            if !state.descriptorsClosed { syscalls.eventfdSignal(wake) }
        }
    }

    /// Reads the machine again on the watcher's thread, and hands the reading on if it changed: for a source the
    /// kernel does not announce (NetworkManager's metered hint).
    func rereadNow() {
        state.withLock { state in
            guard !state.stopping, !state.descriptorsClosed else { return }
            state.rereadWanted = true
            syscalls.eventfdSignal(wake)
        }
    }

    /// How many times the poll interval has read the pressure sources.
    var pressureReadCount: Int { state.withLock { $0.pressureReadCount } }

    /// The kernel thread id of the watcher's thread, once it runs (for checking that it sleeps while idle).
    var threadID: Int32? { state.withLock { $0.threadID } }

    /// How many readings of memory pressure the kernel's wake-ups triggered.
    var pressureWakeUpCount: Int { state.withLock { $0.pressureWakeUpCount } }

    /// How many re-reads kernel messages have triggered.
    var rereadCount: Int { state.withLock { $0.rereadCount } }

    /// How many kernel messages (of any subsystem) the thread has received.
    var kernelMessageCount: Int { state.withLock { $0.kernelMessageCount } }

    // MARK: - The thread

    /// The thread's body: wait, drain, re-read, until `shutdown()`.
    private func run() {
        state.withLock { $0.threadID = syscalls.currentThreadID() }
        defer { closeDescriptors() }
        var watched = [
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            pollfd(fd: ueventSocket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: routeSocket, events: Int16(POLLIN), revents: 0),
        ] + wakeUps.map { pollfd(fd: $0.fd, events: $0.pollEvents, revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let clock = ContinuousClock()
        let interval = pressurePollInterval.map { Duration.seconds($0) }
        var nextPressureRead: ContinuousClock.Instant?
        while true {
            // Without a pressure poll interval, no timeout: only the kernel or shutdown() ends the wait. With one,
            // the wait ends at the next pressure reading however many kernel messages came in between.
            let timeout = nextPressureRead.map { next -> Int32 in
                let left = clock.now.duration(to: next)
                guard left > .zero else { return 0 }
                let (seconds, attoseconds) = left.components
                return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            } ?? -1
            let ready = watched.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
            if ready < 0 {
                if Glibc.errno == EINTR { continue }
                // EFAULT, EINVAL or ENOMEM: not expected with three valid entries; stop rather than spin.
                return
            }
            if watched[0].revents != 0 {
                // Shutdown, or the daemon's wish for pressure readings changed.
                var counter: UInt64 = 0
                _ = read(wake, &counter, MemoryLayout<UInt64>.size)
                let (stopping, wanted, rereadWanted) = state.withLock { state in
                    defer { state.rereadWanted = false }
                    return (state.stopping, state.pressureWanted, state.rereadWanted)
                }
                if stopping { return }
                if rereadWanted { reread() }
                if wanted, let interval {
                    if nextPressureRead == nil {
                        nextPressureRead = clock.now + interval
                        rereadPressure()
                    }
                } else {
                    nextPressureRead = nil
                }
            }
            if let next = nextPressureRead, let interval, clock.now >= next {
                nextPressureRead = clock.now + interval
                rereadPressure()
            }
            if ready == 0 { continue }
            var changed = false
            if watched[1].revents != 0 {
                changed = drain(&watched[1], into: &buffer, isRelevant: Self.isPowerSupplyMessage) || changed
            }
            if watched[2].revents != 0 {
                // Every message of the subscribed groups is about a link or an address.
                changed = drain(&watched[2], into: &buffer, isRelevant: { _ in true }) || changed
            }
            if changed { reread() }
            wokenForPressure(&watched[3...])
        }
    }

    /// Reads memory pressure if one of the wake-ups is ready: at least at the level of the PSI triggers that fired.
    private func wokenForPressure(_ entries: inout ArraySlice<pollfd>) {
        var woken = false
        var floor: MemoryPressure?
        for (index, wakeUp) in zip(entries.indices, wakeUps) where entries[index].revents != 0 {
            let revents = entries[index].revents
            if revents & Int16(POLLERR | POLLNVAL) != 0 && revents & Int16(POLLPRI | POLLIN) == 0 {
                // Its file is gone (the group removed): nothing more comes from it.
                entries[index].fd = -1
                continue
            }
            woken = true
            switch wakeUp.kind {
            case .counter: syscalls.eventfdDrain(wakeUp.fd)
            case .psiTrigger(let level): floor = max(floor ?? level, level)
            }
        }
        guard woken else { return }
        state.withLock { $0.pressureWakeUpCount += 1 }
        rereadPressure(floor: floor, polled: false)
    }

    /// Reads every queued message of a socket; true when one of them (or a lost one) calls for a re-read.
    private func drain(
        _ entry: inout pollfd, into buffer: inout [UInt8], isRelevant: (UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        var relevant = false
        while true {
            let result = buffer.withUnsafeMutableBytes { bytes -> (count: Int, relevant: Bool) in
                let count = recv(entry.fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT))
                guard count > 0 else { return (count, false) }
                return (count, isRelevant(UnsafeRawBufferPointer(rebasing: bytes[0..<count])))
            }
            if result.count >= 0 {
                state.withLock { $0.kernelMessageCount += 1 }
                relevant = relevant || result.relevant
                continue
            }
            switch Glibc.errno {
            case EAGAIN, EWOULDBLOCK:
                return relevant
            case EINTR:
                continue
            case ENOBUFS:
                // The socket overflowed and messages were lost: whatever they said, the files have it.
                relevant = true
            default:
                // Not expected from a bound netlink socket; stop polling it rather than spin on the error.
                entry.fd = -1
                return relevant
            }
        }
    }

    /// Whether a device-event message is about a power supply.
    private static func isPowerSupplyMessage(_ message: UnsafeRawBufferPointer) -> Bool {
        KernelUevent(message)?.isPowerSupplyEvent ?? false
    }

    /// Reads memory pressure (at least `floor`) and the thermal state again and hands the reading on if they changed;
    /// `polled` counts it as a reading at the poll interval.
    private func rereadPressure(floor: MemoryPressure? = nil, polled: Bool = true) {
        if polled { state.withLock { $0.pressureReadCount += 1 } }
        var reading = current
        reader.readPressure(into: &reading, floor: floor)
        let changed = state.withLock { state in
            // Only the pressure fields: power and network stay as the kernel's last announcement left them.
            var merged = state.current
            merged.memoryPressure = reading.memoryPressure
            merged.thermalState = reading.thermalState
            guard merged != state.current else { return nil as MachineReading? }
            state.current = merged
            return merged
        }
        if let changed { handler(changed) }
    }

    /// Reads the machine again and hands the reading on if it changed.
    private func reread() {
        let reading = reader.read()
        let changed = state.withLock { state in
            state.rereadCount += 1
            guard reading != state.current else { return false }
            state.current = reading
            return true
        }
        if changed { handler(reading) }
    }

    /// Closes the sockets and the eventfd, once.
    private func closeDescriptors() {
        state.withLock { state in
            guard !state.descriptorsClosed else { return }
            state.descriptorsClosed = true
            state.stopping = true
            for fd in [ueventSocket, routeSocket, wake] + wakeUps.map(\.fd) { syscalls.close(fd) }
        }
    }
}
