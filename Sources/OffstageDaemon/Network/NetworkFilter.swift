import Dispatch
import Logging
import OffstageCore
import Synchronization

/// Carries out the core's decisions on the apps' traffic (SPEC SET-2) in the kernel, with nftables rules on the
/// apps' own sockets (see ``NetworkRuleset``). It decides nothing: the core says which app is restricted and why.
///
/// A new restriction (an app left the foreground, a setting changed) is handed over in one call that only records it
/// and wakes the filter's own thread, which applies everything waiting as one transaction: leaving the foreground
/// never waits for the kernel. Lifting one is done at once (``liftNow(_:)``), before the app is thawed and told it is
/// active, so an app in front always has its network; it costs a transaction only for an app that was restricted.
/// Adding an app (when its cgroup is made, before its first process starts) and removing it (at uninstall, before its
/// cgroup goes) are done at once, so no process of the app runs before its rules exist, and no rule outlives the
/// cgroup it names.
///
/// Where the rules cannot be had (no libnftables, no right to change the firewall, apps not in cgroup2 groups) the
/// filter says why and what to install, and does nothing: the settings still hold the scheduler and the transfers
/// (advisory, as before), never silently (`offstage status`).
final class NetworkFilter: Sendable {
    /// Whether the kernel enforces the rules here.
    enum Availability: Sendable, Hashable {
        /// The rules are in the named table.
        case enforced(table: String)
        /// They cannot be: why, and what would make them so.
        case advisory(reason: String, fix: String)
    }

    /// Whether the kernel enforces the rules here, and why not.
    let availability: Availability
    private let nftables: Nftables?
    private let ruleset: NetworkRuleset?
    private let mount: CgroupMounts.Mount?
    private let logger: Logger
    private let metrics: DaemonMetrics
    /// The filter's thread, where rules are changed in the order decided (a thread of its own, not a dispatch queue: no
    /// wake-up while idle); nil where no thread could be started, and then they are changed on the caller's.
    private let queue = try? SerialWorker(name: "offstage-rules", nice: 0)
    /// Restrictions decided and not applied yet (taken by the filter's thread).
    private let inbox = Mutex(Inbox())
    /// What is in the kernel, changed only with the context's lock held, in the order it is applied.
    private let applied = Mutex(Applied())

    private struct Inbox: Sendable {
        /// Each app's latest decision, with the number of the call that made it.
        var changes: [AppID: (restriction: NetworkRestriction?, decision: UInt64)] = [:]
        /// Numbers calls on the loop, so a decision taken from the inbox never undoes a later one applied at once.
        var decisions: UInt64 = 0
        /// When the oldest change waiting was decided (monotonic nanoseconds); nil when none waits.
        var since: Int64?
    }

    private struct Applied: Sendable {
        /// The registered apps: their slot and cgroup path (relative to `/sys/fs/cgroup`, as nftables reads it).
        var slots: [AppID: (slot: NetworkRuleset.Slot, cgroup: String)] = [:]
        /// Each app's restriction as last decided; rules follow it for registered apps.
        var restrictions: [AppID: NetworkRestriction] = [:]
        /// The number of the decision each app's rules were last set by.
        var decisions: [AppID: UInt64] = [:]
        var nextSlot = 1
        /// The last failure, shown by `offstage status` until a batch succeeds again.
        var lastFailure: String?
    }

    /// A filter that does nothing, for shells without one (the simulator has no kernel).
    init(advisory reason: String, fix: String, logger: Logger, metrics: DaemonMetrics) {
        availability = .advisory(reason: reason, fix: fix)
        nftables = nil
        ruleset = nil
        mount = nil
        self.logger = logger
        self.metrics = metrics
    }

    private init(nftables: Nftables, ruleset: NetworkRuleset, mount: CgroupMounts.Mount, logger: Logger, metrics: DaemonMetrics) {
        availability = .enforced(table: ruleset.table)
        self.nftables = nftables
        self.ruleset = ruleset
        self.mount = mount
        self.logger = logger
        self.metrics = metrics
    }

    /// Starts enforcing for the daemon instance `instanceName`, whose apps' groups `control` makes: replaces any table
    /// a killed predecessor left with an empty one. Never throws: a filter that cannot enforce says why.
    static func start(
        instanceName: String, control: any ProcessControl, logger: Logger, metrics: DaemonMetrics
    ) -> NetworkFilter {
        func advisory(_ reason: String, _ fix: String) -> NetworkFilter {
            logger.warning("data controls are advisory: \(reason); \(fix)")
            return NetworkFilter(advisory: reason, fix: fix, logger: logger, metrics: metrics)
        }
        guard let v2 = control as? FreezerCgroupV2 else {
            return advisory(
                "the apps are not in cgroup2 groups (the \(control.kind.rawValue) freezer is in use), and nftables matches sockets by their cgroup2 group",
                "run offstaged where the cgroup2 hierarchy is writable (as root, or in a delegated cgroup)")
        }
        let mount = v2.hierarchy.mount
        guard NetworkCgroupPath.relative(mount.mountPoint) != nil else {
            return advisory(
                "the cgroup2 hierarchy is mounted at \(mount.mountPoint), outside /sys/fs/cgroup, where nftables looks for cgroups",
                "mount the cgroup2 hierarchy at or under /sys/fs/cgroup")
        }
        let nftables: Nftables
        do {
            nftables = try Nftables()
        } catch {
            return advisory("\(error)", "install nftables (Debian: apt-get install nftables)")
        }
        let level = NetworkCgroupPath.level(mountRoot: mount.root, below: 2)
        let ruleset = NetworkRuleset(instanceName: instanceName, level: level)
        do {
            try nftables.run(ruleset.replaceTable())
        } catch {
            if error.isPermissionDenied {
                return advisory(
                    "no right to change the firewall (\(error))", "run offstaged as root or with CAP_NET_ADMIN")
            }
            return advisory("the kernel refused the daemon's table: \(error)", "check that the kernel has nf_tables with socket matching (nft_socket)")
        }
        logger.info("data controls enforced in nftables table inet \(ruleset.table)")
        return NetworkFilter(nftables: nftables, ruleset: ruleset, mount: mount, logger: logger, metrics: metrics)
    }

    /// What `offstage status` says of the data controls: whether enforced, and the detail.
    var status: (state: String, detail: String) {
        switch availability {
        case .enforced(let table):
            if let failure = applied.withLock({ $0.lastFailure }) {
                return ("failing", "nftables table inet \(table): the last change was refused: \(failure)")
            }
            return ("enforced", "nftables table inet \(table)")
        case .advisory(let reason, let fix):
            return ("advisory", "\(reason); to enforce them, \(fix)")
        }
    }

    // MARK: Changes

    /// The core's decision for some apps: recorded now, applied on the filter's thread with whatever else waits.
    func restrict(_ change: NetworkRulesChange) {
        guard nftables != nil else { return }
        let wake = inbox.withLock { inbox in
            inbox.decisions += 1
            for (id, restriction) in change.restrictions { inbox.changes[id] = (restriction, inbox.decisions) }
            guard inbox.since == nil else { return false }
            inbox.since = DaemonMetrics.monotonicNanoseconds()
            return true
        }
        if wake {
            if let queue { queue.async { self.applyWaiting() } } else { applyWaiting() }
        }
    }

    /// Lifts at once the restrictions `change` lifts, before the caller goes on: an app coming to the front has its
    /// network before it is told it is active (a block, by contrast, waits for the filter's thread). Costs one
    /// transaction on the caller's thread, and only when a restricted app is allowed again.
    func liftNow(_ change: NetworkRulesChange) {
        guard let nftables, let ruleset else { return }
        let lifted = change.restrictions.compactMap { $0.value == nil ? $0.key : nil }
        guard !lifted.isEmpty else { return }
        let decision = inbox.withLock { inbox in
            inbox.decisions += 1
            return inbox.decisions
        }
        applied.withLock { applied in
            var text = ""
            for id in lifted {
                guard let before = applied.restrictions.removeValue(forKey: id) else { continue }
                applied.decisions[id] = decision
                if let (_, cgroup) = applied.slots[id] { text += ruleset.restrict(cgroup, from: before, to: nil) }
            }
            guard !text.isEmpty else { return }
            let start = DaemonMetrics.monotonicNanoseconds()
            do throws(NftablesError) {
                try nftables.run(text)
                applied.lastFailure = nil
                metrics.networkRuleSeconds.recordNanoseconds(DaemonMetrics.monotonicNanoseconds() - start)
            } catch {
                restrictionsFailed(&applied, "lifting \(lifted.count) restrictions", error)
            }
        }
    }

    /// Adds an app whose cgroup `group` was just made, before any of its processes starts, with `restriction`: the
    /// core's latest decision (a change decided in the same input may still be on its way to the inbox).
    func register(_ id: AppID, _ group: AppGroup, restriction: NetworkRestriction?) {
        guard let nftables, let ruleset, let path = group.cgroupPath, let cgroup = NetworkCgroupPath.relative(path) else { return }
        applied.withLock { applied in
            guard applied.slots[id] == nil else { return }
            let slot = NetworkRuleset.Slot(number: applied.nextSlot)
            applied.nextSlot += 1
            applied.restrictions[id] = restriction
            applied.decisions[id] = inbox.withLock { $0.decisions }
            do throws(NftablesError) {
                try nftables.run(ruleset.register(slot, cgroup: cgroup, restriction))
                applied.slots[id] = (slot, cgroup)
            } catch {
                failed(&applied, "adding \(id)", error)
            }
        }
    }

    /// Removes an app being forgotten, while its cgroup still exists.
    func unregister(_ id: AppID) {
        guard let nftables, let ruleset else { return }
        applied.withLock { applied in
            let restriction = applied.restrictions.removeValue(forKey: id)
            applied.decisions[id] = nil
            guard let (slot, cgroup) = applied.slots.removeValue(forKey: id) else { return }
            do throws(NftablesError) {
                try nftables.run(ruleset.unregister(slot, cgroup: cgroup, restriction))
            } catch {
                failed(&applied, "removing \(id)", error)
            }
        }
    }

    /// Removes the table: nothing of the daemon is left in the kernel. Waits for a batch in progress.
    func stop() {
        guard let nftables, let ruleset else { return }
        queue?.sync {}
        applied.withLock { applied in
            do throws(NftablesError) {
                try nftables.run(ruleset.deleteTable())
                applied.slots = [:]
            } catch {
                logger.error("could not remove the nftables table inet \(ruleset.table): \(error)")
            }
        }
    }

    /// The bytes each app's sockets received and sent since its counters were made (SPEC SET-3); an app without
    /// counters (the controls advisory, its cgroup not made yet) is left out. Read from the kernel over netlink
    /// (``NetlinkCounters``), not through libnftables: a few apps by name, many in one dump of the table's counters.
    func counters(of ids: [AppID]) -> [AppID: NetlinkCounters.Bytes] {
        guard let ruleset, !ids.isEmpty else { return [:] }
        let slots = applied.withLock { applied in ids.compactMap { id in applied.slots[id].map { (id, $0.slot) } } }
        guard !slots.isEmpty else { return [:] }
        do throws(NetlinkCounters.Failure) {
            let bytes = try NetlinkCounters(table: ruleset.table).read(slots.flatMap { [$0.1.input, $0.1.output] })
            var result: [AppID: NetlinkCounters.Bytes] = [:]
            for (id, slot) in slots {
                guard let received = bytes[slot.input], let sent = bytes[slot.output] else { continue }
                result[id] = .init(received: max(0, received), sent: max(0, sent))
            }
            return result
        } catch {
            logger.warning("could not read the traffic counters of \(slots.count) app(s): \(error)")
            return [:]
        }
    }

    /// Waits until every change handed over so far is in force (tests, benchmarks).
    func settle() { queue?.sync {} }

    /// The restrictions in force, as last applied (tests and `status`).
    var restrictions: [AppID: NetworkRestriction] { applied.withLock { $0.restrictions } }

    /// On the filter's thread: applies every change waiting, in one transaction.
    private func applyWaiting() {
        guard let nftables, let ruleset else { return }
        let (changes, since) = inbox.withLock { inbox in
            defer {
                inbox.changes = [:]
                inbox.since = nil
            }
            return (inbox.changes, inbox.since)
        }
        guard !changes.isEmpty else { return }
        applied.withLock { applied in
            var text = ""
            for (id, change) in changes {
                // Lifted at once by a later decision (the app came to the front meanwhile): that one stands.
                if let later = applied.decisions[id], later > change.decision { continue }
                applied.decisions[id] = change.decision
                let before = applied.restrictions[id]
                applied.restrictions[id] = change.restriction
                if let (_, cgroup) = applied.slots[id] {
                    text += ruleset.restrict(cgroup, from: before, to: change.restriction)
                }
            }
            guard !text.isEmpty else { return }
            do throws(NftablesError) {
                try nftables.run(text)
                applied.lastFailure = nil
                if let since { metrics.networkRuleSeconds.recordNanoseconds(DaemonMetrics.monotonicNanoseconds() - since) }
            } catch {
                restrictionsFailed(&applied, "applying \(changes.count) restriction changes", error)
            }
        }
    }

    private func failed(_ applied: inout Applied, _ what: String, _ error: NftablesError) {
        metrics.networkRuleFailures.increment()
        applied.lastFailure = "\(what): \(error)"
        logger.error("nftables refused \(what): \(error)")
    }

    /// A change of restrictions was refused, so what the refused maps hold is no longer known (a transaction is all or
    /// nothing, but it may have held several apps' changes): they are rewritten whole from what was decided. The
    /// failure stays in `status` until a change applies.
    private func restrictionsFailed(_ applied: inout Applied, _ what: String, _ error: NftablesError) {
        failed(&applied, what, error)
        guard let nftables, let ruleset else { return }
        var decided: [String: NetworkRestriction] = [:]
        for (id, restriction) in applied.restrictions { if let (_, cgroup) = applied.slots[id] { decided[cgroup] = restriction } }
        do throws(NftablesError) {
            try nftables.run(ruleset.refused(decided))
            logger.notice("the refused maps were rewritten: \(decided.count) app(s) restricted")
        } catch {
            logger.error("nftables refused rewriting the refused maps too: \(error)")
        }
    }
}

/// Where nftables finds a cgroup: its path below `/sys/fs/cgroup` (the prefix nftables puts before the path it is
/// given), and the depth below the cgroup2 root it compares at.
enum NetworkCgroupPath {
    static let prefix = "/sys/fs/cgroup"

    /// `path` relative to `/sys/fs/cgroup` (empty for that folder itself); nil when it is not below it.
    static func relative(_ path: String) -> String? {
        if path == prefix { return "" }
        guard path.hasPrefix(prefix + "/") else { return nil }
        return String(path.dropFirst(prefix.count + 1))
    }

    /// The depth of a cgroup `below` levels under the mount, whose root is `mountRoot` in the hierarchy (`/` unless a
    /// container mounted a subtree).
    static func level(mountRoot: String, below: Int) -> Int {
        mountRoot.split(separator: "/").count + below
    }
}
