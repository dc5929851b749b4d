import Foundation

/// Counts the wake-ups of the threads of a few processes during the steps of a benchmark — the "thread hops" of a
/// transition. A thread that sleeps and is woken ends its run in a context switch (voluntary when it blocks again,
/// involuntary when it is preempted), so the switches of each thread over a step count its wake-ups; they are read
/// from `/proc/PID/task/TID/status` between steps, never while one is timed.
struct WakeupCounter {
    /// The processes watched, each with the label its threads are reported under.
    let processes: [(label: String, pid: pid_t)]
    /// Wake-ups per step name, then per "label thread-name".
    private(set) var byStep: [String: [String: Int]] = [:]
    /// How many times each step was counted.
    private(set) var steps: [String: Int] = [:]
    private var current: String?
    private var last: [String: (thread: String, switches: Int)] = [:]

    init(_ processes: [(label: String, pid: pid_t)]) {
        self.processes = processes
        last = snapshot()
    }

    /// Ends the step under way (its wake-ups are added to its name) and starts `next`; nil starts a step that is not
    /// counted (a warm-up, a baseline).
    mutating func begin(_ next: String?) {
        let now = snapshot()
        if let current {
            steps[current, default: 0] += 1
            for (tid, entry) in now {
                // A thread that appeared during the step counts from zero; one that ended is lost (rare: the daemon
                // and the app keep their threads).
                let woken = entry.switches - (last[tid]?.switches ?? 0)
                if woken > 0 { byStep[current, default: [:]][entry.thread, default: 0] += woken }
            }
        }
        last = now
        current = next
    }

    /// Mean wake-ups per step of `name`, in total and per thread (largest first).
    func mean(_ name: String) -> (total: Double, threads: [(String, Double)]) {
        let count = Double(max(steps[name] ?? 0, 1))
        let threads = (byStep[name] ?? [:]).map { ($0.key, Double($0.value) / count) }.sorted { $0.1 > $1.1 }
        return (threads.reduce(0) { $0 + $1.1 }, threads)
    }

    /// A line for the report: "6.1 (daemon NIO-ELT-0-#0 3.0, app main 2.0, …)".
    func describe(_ name: String) -> String {
        let (total, threads) = mean(name)
        let parts = threads.filter { $0.1 >= 0.05 }.map { "\($0.0) \(String(format: "%.1f", $0.1))" }
        return String(format: "%.1f", total) + " (" + parts.joined(separator: ", ") + ")"
    }

    private func snapshot() -> [String: (thread: String, switches: Int)] {
        var result: [String: (String, Int)] = [:]
        for (label, pid) in processes {
            for (tid, thread) in ProcReader.threads(pid) {
                let name = tid == String(pid) ? "main" : thread.name
                result["\(pid)/\(tid)"] = ("\(label) \(name)", thread.switches)
            }
        }
        return result
    }
}
