/// One timer for the whole system: the shell arms it for ``OffstageCore/nextDeadline`` and calls
/// ``OffstageCore/advance(to:)`` when it fires. With nothing due there is no deadline and no wake-up.
extension OffstageCore {
    /// The earliest instant at which the core has something to do, or nil.
    public var nextDeadline: Instant? {
        var earliest: Instant? = schedulerDeadline
        for entry in apps.values {
            guard let process = entry.process else { continue }
            for candidate in Self.deadlines(of: process) where earliest == nil || candidate < earliest! {
                earliest = candidate
            }
        }
        return earliest
    }

    static func deadlines(of process: AppProcess) -> [Instant] {
        var result: [Instant] = []
        if let termination = process.termination {
            if let at = termination.escalateAt { result.append(at) }
            return result
        }
        if !process.launchCompleted, let at = process.launchDeadline { result.append(at) }
        if !process.attached, let at = process.reattachDeadline { result.append(at) }
        if let at = process.inFlight?.deadline { result.append(at) }
        if let at = process.ledger.expirationDue { result.append(at) }
        if let at = process.ledger.overrunDue { result.append(at) }
        if let at = process.suspendAt { result.append(at) }
        for run in process.runs { result.append(run.deadline) }
        return result
    }

    /// Does everything due at or before `now`.
    public mutating func advance(to now: Instant) -> [CoreAction] {
        for (id, entry) in apps {
            guard let process = entry.process else { continue }
            if Self.deadlines(of: process).contains(where: { $0 <= now }) { touched.insert(id) }
        }
        return finish(now)
    }
}
