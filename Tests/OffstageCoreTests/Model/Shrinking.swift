import OffstageCore

/// Shrinks a failing command sequence to a small one that still fails the same way, by delta debugging: drop chunks
/// of commands (halves, quarters, … down to single commands), then make the arguments of each remaining command
/// simpler, and repeat until nothing more can go.
///
/// PropertyBased's own shrinking works on a generator's tree of values and re-runs the test body for each candidate;
/// a session is a sequence of commands generated while looking at the shell, and what matters when shrinking it is
/// that every candidate is replayed from the start and fails with the same invariant, so the shrinking is done here.
enum Shrinker {
    /// The result of a shrink.
    struct Result {
        /// The smallest failing sequence found.
        var commands: [ModelCommand]
        /// How many candidates were replayed.
        var attempts: Int
    }

    /// Shrinks `commands`. `failingLength` replays a candidate and returns how many of its commands ran until it
    /// failed the same way, or nil if it did not; commands after the failure are dropped at once.
    static func shrink(
        _ commands: [ModelCommand], maxAttempts: Int = 5_000, failingLength: ([ModelCommand]) -> Int?
    ) -> Result {
        var current = commands
        var attempts = 0
        func accept(_ candidate: [ModelCommand]) -> Bool {
            guard attempts < maxAttempts else { return false }
            attempts += 1
            guard let length = failingLength(candidate) else { return false }
            current = Array(candidate.prefix(length))
            return true
        }
        if let length = failingLength(current) { current = Array(current.prefix(length)) }
        var changed = true
        while changed && attempts < maxAttempts {
            changed = false
            // Drop chunks, from halves down to single commands (ddmin).
            var chunks = 2
            while current.count > 1 && attempts < maxAttempts {
                let size = (current.count + chunks - 1) / chunks
                var dropped = false
                var start = 0
                while start < current.count {
                    var candidate = current
                    candidate.removeSubrange(start..<min(start + size, current.count))
                    if !candidate.isEmpty && accept(candidate) {
                        dropped = true
                        changed = true
                        break
                    }
                    start += size
                }
                if dropped {
                    chunks = max(chunks - 1, 2)
                } else if size == 1 {
                    break
                } else {
                    chunks = min(chunks * 2, current.count)
                }
            }
            // Simpler arguments, one command at a time.
            var index = 0
            while index < current.count && attempts < maxAttempts {
                for simpler in simplifications(of: current[index]) {
                    var candidate = current
                    candidate[index] = simpler
                    if accept(candidate) {
                        changed = true
                        break
                    }
                }
                index += 1
            }
        }
        return Result(commands: current, attempts: attempts)
    }

    /// Simpler forms of a command, simplest first: shorter waits, plainer manifests, fewer conditions.
    static func simplifications(of command: ModelCommand) -> [ModelCommand] {
        switch command {
        case .advance(let ms):
            return [1, ms / 10, ms / 2].filter { $0 >= 1 && $0 < ms }.map { .advance(ms: $0) }
        case .install(let slot, let variant):
            let order = ManifestVariant.allCases
            return order.prefix { $0 != variant }.map { .install(slot, $0) }
        case .spawn(let slot, let trait) where trait != .normal:
            return [.spawn(slot, .normal)]
        case .exit(let slot, let status) where status != .exited(0):
            return [.exit(slot, .exited(0))]
        case .endTask(let slot, let index) where index > 0:
            return [.endTask(slot, 0)]
        case .complete(let slot, let index, let result) where index > 0 || result != .newData:
            return [.complete(slot, 0, .newData), .complete(slot, 0, result)].filter { $0 != command }
        case .submit(let slot, let kind, let after, let network, let power):
            var simpler: [ModelCommand] = []
            if after != nil {
                simpler.append(.submit(slot, kind, earliestAfterSeconds: nil, network: network, power: power))
            }
            if network {
                simpler.append(.submit(slot, kind, earliestAfterSeconds: after, network: false, power: power))
            }
            if power {
                simpler.append(.submit(slot, kind, earliestAfterSeconds: after, network: network, power: false))
            }
            return simpler
        case .conditions(let overrides):
            var simpler: [ModelCommand] = []
            for field in 0..<4 {
                var fewer = overrides
                switch field {
                case 0: fewer.batteryLevel = nil
                case 1: fewer.charging = nil
                case 2: fewer.network = nil
                default: fewer.idle = nil
                }
                if fewer != overrides { simpler.append(.conditions(fewer)) }
            }
            return simpler
        case .fetchInterval(let slot, .seconds):
            return [.fetchInterval(slot, .minimum)]
        case .registerAccessory(let slot, let mode) where mode != .externalAccessory:
            return [.registerAccessory(slot, .externalAccessory)]
        case .accessoryData(let slot, true):
            return [.accessoryData(slot, closed: false)]
        case .push(let slot, let push):
            return push.simplifications.map { .push(slot, $0) }
        case .completePush(let slot, let index, let result) where index > 0 || result != .newData:
            return [.completePush(slot, 0, .newData), .completePush(slot, 0, result)].filter { $0 != command }
        default:
            return []
        }
    }
}
