import Foundation
import Glibc
import Logging
import OffstageCore
import Testing

@testable import OffstageDaemon

/// The nftables commands of the daemon's table, as text (SPEC SET-2).
@Suite("Network rules: the daemon's nftables table, as text")
struct NetworkRulesetTests {
    let ruleset = NetworkRuleset(instanceName: "9f3a0c", level: 2)
    let slot = NetworkRuleset.Slot(number: 7)

    @Test("SET-2: the table is named after the daemon instance, and only hex digits and '_' reach the name")
    func tableName() {
        #expect(ruleset.table == "offstage_9f3a0c")
        #expect(NetworkRuleset(instanceName: "a b\"c;d", level: 2).table == "offstage_a_b_c_d")
    }

    @Test("SET-2: starting replaces any table of the name in one batch, matching sockets by cgroup at the apps' level")
    func replaceTable() {
        let text = ruleset.replaceTable()
        let lines = text.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(3)) == [
            "add table inet offstage_9f3a0c", "delete table inet offstage_9f3a0c", "add table inet offstage_9f3a0c",
        ])
        #expect(lines.contains("add rule inet offstage_9f3a0c output socket cgroupv2 level 2 vmap @out_apps"))
        #expect(lines.contains("add rule inet offstage_9f3a0c input socket cgroupv2 level 2 vmap @in_apps"))
        #expect(ruleset.deleteTable() == "delete table inet offstage_9f3a0c\n")
    }

    @Test("SET-2: an allowed app is only counted; a restricted one is refused out (reset, prohibited) and dropped in, but for resets")
    func rules() {
        let allowed = ruleset.rules(slot, nil)
        #expect(allowed.contains("counter name \"app7_out\""))
        #expect(allowed.contains("counter name \"app7_in\""))
        #expect(!allowed.contains("reject") && !allowed.contains("drop"))
        let blocked = ruleset.rules(slot, .dataSaver).split(separator: "\n").map(String.init)
        #expect(blocked.first == "flush chain inet offstage_9f3a0c app7_out")
        #expect(blocked.contains("add rule inet offstage_9f3a0c app7_out meta l4proto tcp reject with tcp reset comment \"data-saver\""))
        #expect(blocked.contains("add rule inet offstage_9f3a0c app7_out reject with icmpx type admin-prohibited comment \"data-saver\""))
        let accept = blocked.firstIndex(of: "add rule inet offstage_9f3a0c app7_in tcp flags rst accept")
        let drop = blocked.firstIndex(of: "add rule inet offstage_9f3a0c app7_in drop comment \"data-saver\"")
        #expect(accept != nil && drop != nil && accept! < drop!, "the resets the app is sent come before the drop")
    }

    @Test("SET-2: an app is added with its chains, counters and map elements, and removed the same way")
    func registerAndUnregister() {
        let added = ruleset.register(slot, cgroup: "unified/offstage.x/com.example.a", .backgroundDataOff)
        #expect(added.contains("add counter inet offstage_9f3a0c app7_out"))
        #expect(added.contains("add element inet offstage_9f3a0c out_apps { \"unified/offstage.x/com.example.a\" : jump app7_out }"))
        #expect(added.contains("comment \"background-data-off\""))
        #expect(!added.contains("flush"), "a new chain has nothing to flush")
        let removed = ruleset.unregister(slot, cgroup: "unified/offstage.x/com.example.a")
        #expect(removed.hasPrefix("delete element inet offstage_9f3a0c out_apps { \"unified/offstage.x/com.example.a\" }"))
        #expect(removed.contains("delete counter inet offstage_9f3a0c app7_in"))
    }

    @Test("SET-2: nftables finds cgroups below /sys/fs/cgroup, at their depth in the hierarchy")
    func cgroupPaths() {
        #expect(NetworkCgroupPath.relative("/sys/fs/cgroup/unified/offstage.x/a") == "unified/offstage.x/a")
        #expect(NetworkCgroupPath.relative("/sys/fs/cgroup") == "")
        #expect(NetworkCgroupPath.relative("/sys/fs/cgroupx/a") == nil)
        #expect(NetworkCgroupPath.relative("/mnt/cgroup2/a") == nil)
        #expect(NetworkCgroupPath.level(mountRoot: "/", below: 2) == 2)
        #expect(NetworkCgroupPath.level(mountRoot: "/lxc/box", below: 2) == 4)
    }
}

/// The filter against the real kernel: its own table, a real cgroup, rules applied off the caller's thread. Needs
/// nftables and the right to change the firewall: skipped, saying so, where either is missing.
@Suite(
    "Network filter in the kernel (SPEC SET-2)", .serialized,
    .enabled(if: KernelNetwork.usable, "needs root and libnftables (apt-get install nftables)"))
struct NetworkFilterKernelTests {
    let logger = Logger(label: "test")

    func makeFilter(_ instance: String, metrics: DaemonMetrics = DaemonMetrics()) throws -> (NetworkFilter, any ProcessControl) {
        let control = try ProcessControlFactory.make(.cgroupV2, instanceName: instance)
        let filter = NetworkFilter.start(instanceName: instance, control: control, logger: logger, metrics: metrics)
        return (filter, control)
    }

    func listing(_ filter: NetworkFilter) throws -> String? {
        guard case .enforced(let table) = filter.availability else { return nil }
        return try? Nftables().run("list table inet \(table)")
    }

    @Test("SET-2: register, restrict, lift and unregister an app; the table goes at stop; the latency is recorded")
    func lifecycle() throws {
        let instance = "t\(getpid())a"
        let metrics = DaemonMetrics()
        let (filter, control) = try makeFilter(instance, metrics: metrics)
        defer { filter.stop(); control.removeAll() }
        #expect(filter.status.state == "enforced")
        let app: AppID = "com.example.a"
        let group = try control.makeGroup(forApp: app.rawValue)
        defer { control.removeGroup(group) }
        filter.register(app, group, restriction: nil)
        var text = try #require(try listing(filter))
        #expect(text.contains("\"jump\":{\"target\":\"app1_out\"}") || text.contains("app1_out"))
        #expect(!text.contains("background-data-off"))
        filter.restrict(NetworkRulesChange([app: .backgroundDataOff]))
        filter.settle()
        text = try #require(try listing(filter))
        #expect(text.contains("background-data-off"))
        #expect(filter.restrictions == [app: .backgroundDataOff])
        #expect(metrics.exposition().contains("offstage_network_rule_seconds_count 1"), "\(metrics.exposition())")
        filter.restrict(NetworkRulesChange([app: Optional<NetworkRestriction>.none]))
        filter.settle()
        #expect(try #require(try listing(filter)).contains("background-data-off") == false)
        filter.unregister(app)
        #expect(try #require(try listing(filter)).contains("app1_out") == false)
        filter.stop()
        #expect(try listing(filter) == nil, "no table once stopped")
    }

    @Test("SET-3: each registered app's traffic counters are read, a few by name and many in one listing; an app without them is left out")
    func countersRead() throws {
        let instance = "t\(getpid())c"
        let (filter, control) = try makeFilter(instance)
        defer { filter.stop(); control.removeAll() }
        let apps = (1...10).map { AppID(stringLiteral: "com.example.counted\($0)") }
        var groups: [AppGroup] = []
        defer { groups.forEach(control.removeGroup) }
        for app in apps {
            let group = try control.makeGroup(forApp: app.rawValue)
            groups.append(group)
            filter.register(app, group, restriction: nil)
        }
        let few = filter.counters(of: Array(apps.prefix(2)) + ["com.example.unregistered"])
        #expect(few == [apps[0]: .init(received: 0, sent: 0), apps[1]: .init(received: 0, sent: 0)])
        let many = filter.counters(of: apps)
        #expect(Set(many.keys) == Set(apps) && many.values.allSatisfy { $0 == .init(received: 0, sent: 0) })
        filter.unregister(apps[0])
        #expect(filter.counters(of: [apps[0]]).isEmpty, "its counters went with it")
    }

    @Test("SET-2: a start replaces the table a killed daemon left; a change the kernel refuses is reported, and the next one applies")
    func replaceAndRefusal() throws {
        let instance = "t\(getpid())b"
        let (first, control) = try makeFilter(instance)
        defer { control.removeAll() }
        let app: AppID = "com.example.b"
        let group = try control.makeGroup(forApp: app.rawValue)
        defer { control.removeGroup(group) }
        first.register(app, group, restriction: .dataSaver)
        #expect(try #require(try listing(first)).contains("data-saver"))
        // The first is never stopped (as after kill -9): the second replaces its table, with nothing of the app.
        let second = NetworkFilter.start(instanceName: instance, control: control, logger: logger, metrics: DaemonMetrics())
        defer { second.stop() }
        #expect(try #require(try listing(second)).contains("data-saver") == false)
        // A group whose cgroup is gone: the kernel refuses the path, and the status says so.
        let gone = AppGroup(key: "gone", kind: .cgroupV2, directoryName: "gone", cgroupPath: group.cgroupPath! + "-gone")
        second.register("com.example.gone", gone, restriction: nil)
        #expect(second.status.state == "failing")
        #expect(second.status.detail.contains("adding com.example.gone"), "\(second.status.detail)")
        second.register(app, group, restriction: nil)
        second.restrict(NetworkRulesChange([app: .backgroundActivityOff]))
        second.settle()
        #expect(second.status.state == "enforced", "a batch that applies clears the failure")
        #expect(try #require(try listing(second)).contains("background-activity-off"))
    }

    @Test("SET-2: a lift is in force when liftNow returns, and a block decided before it, applied after, does not undo it")
    func liftBeforeForeground() throws {
        let instance = "t\(getpid())d"
        let (filter, control) = try makeFilter(instance)
        defer { filter.stop(); control.removeAll() }
        let app: AppID = "com.example.d"
        let group = try control.makeGroup(forApp: app.rawValue)
        defer { control.removeGroup(group) }
        filter.register(app, group, restriction: .dataSaver)
        for _ in 0..<20 {
            // Decided one after the other on the loop: the block first (to the filter's thread), then the lift (now).
            filter.restrict(NetworkRulesChange([app: .backgroundDataOff]))
            filter.liftNow(NetworkRulesChange([app: Optional<NetworkRestriction>.none]))
            #expect(filter.restrictions[app] == nil)
            filter.restrict(NetworkRulesChange([app: Optional<NetworkRestriction>.none]))
            filter.settle()
            #expect(filter.restrictions[app] == nil)
            let text = try #require(try listing(filter))
            #expect(!text.contains("background-data-off") && !text.contains("data-saver"), "\(text)")
            filter.restrict(NetworkRulesChange([app: .dataSaver]))
            filter.settle()
            #expect(try #require(try listing(filter)).contains("data-saver"))
        }
    }

    @Test("SET-2: where the apps are not in cgroup2 groups the controls are advisory, and say why and what to do")
    func advisoryWithoutCgroup2() throws {
        let control = try ProcessControlFactory.make(.signalStop, instanceName: "t\(getpid())c")
        let filter = NetworkFilter.start(instanceName: "t\(getpid())c", control: control, logger: logger, metrics: DaemonMetrics())
        #expect(filter.status.state == "advisory")
        #expect(filter.status.detail.contains("signalStop freezer"), "\(filter.status.detail)")
        #expect(filter.status.detail.contains("to enforce them"))
        filter.restrict(NetworkRulesChange(["com.example.c": .dataSaver]))
        filter.settle()
        #expect(filter.restrictions.isEmpty, "nothing is recorded as in force")
    }
}

/// What the kernel tests need.
enum KernelNetwork {
    static let usable: Bool = {
        guard getuid() == 0, (try? Nftables()) != nil else { return false }
        return CgroupMounts.current().unified != nil
    }()
}
