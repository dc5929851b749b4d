import Glibc

/// The one clock every part of the benchmarks reads: `CLOCK_MONOTONIC`, which is system-wide, so a timestamp taken
/// in the probe app and one taken in the benchmark process can be subtracted.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary, fixed point (boot).
    @inline(__always)
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// CPU time the calling thread has used, ns.
    public static func threadCPU() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// CPU time (user + system) a whole process has used, ns, from /proc/PID/stat (clock-tick resolution).
    public static func processCPU(_ pid: pid_t) -> UInt64? {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 0, utime field 11, stime field 12.
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        let ticks = UInt64(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) * 1_000_000_000 / ticks
    }

    /// Sleeps for `nanoseconds` (resumes after a signal until the time is up).
    public static func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Sleeps for `milliseconds`.
    public static func sleep(milliseconds: UInt64) { sleep(nanoseconds: milliseconds * 1_000_000) }
}

/// `CLOCK_REALTIME`, the clock the daemon's deadlines are on (notification due times are wall-clock instants): the
/// notification benchmarks compare a due time with the moment something happened on this clock, in whichever process.
public enum WallClock {
    /// Nanoseconds since the Unix epoch.
    @inline(__always)
    public static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    /// Whole milliseconds since the Unix epoch, rounded up.
    public static func nowMillisecondsUp() -> Int64 {
        let nanoseconds = now()
        return (nanoseconds + 999_999) / 1_000_000
    }
}
