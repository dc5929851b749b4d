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

    @Test("SET-2: starting replaces any table of the name in one batch: the maps, each restriction's chains, the base chains matching sockets by cgroup at the apps' level")
    func replaceTable() {
        let text = ruleset.replaceTable()
        let lines = text.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(3)) == [
            "add table inet offstage_9f3a0c", "delete table inet offstage_9f3a0c", "add table inet offstage_9f3a0c",
        ])
        for map in ["out_apps", "in_apps", "out_refused", "in_refused"] {
            #expect(lines.contains("add map inet offstage_9f3a0c \(map) { typeof socket cgroupv2 level 2 : verdict; }"))
        }
        let counted = lines.firstIndex(of: "add rule inet offstage_9f3a0c output socket cgroupv2 level 2 vmap @out_apps")
        let refused = lines.firstIndex(of: "add rule inet offstage_9f3a0c output socket cgroupv2 level 2 vmap @out_refused")
        #expect(counted != nil && refused != nil && counted! < refused!, "a refused packet is counted first")
        #expect(lines.contains("add rule inet offstage_9f3a0c input socket cgroupv2 level 2 vmap @in_apps"))
        #expect(lines.contains("add rule inet offstage_9f3a0c input socket cgroupv2 level 2 vmap @in_refused"))
        #expect(ruleset.deleteTable() == "delete table inet offstage_9f3a0c\n")
    }

    @Test("SET-2: each restriction has a chain that refuses out (reset, prohibited) and drops in, but for resets, with its name as comment")
    func restrictionChains() {
        let lines = ruleset.replaceTable().split(separator: "\n").map(String.init)
        for restriction in NetworkRestriction.allCases {
            let name = restriction.rawValue
            #expect(lines.contains("add rule inet offstage_9f3a0c \(name)_out meta l4proto tcp reject with tcp reset comment \"\(name)\""))
            #expect(lines.contains("add rule inet offstage_9f3a0c \(name)_out reject with icmpx type admin-prohibited comment \"\(name)\""))
            let accept = lines.firstIndex(of: "add rule inet offstage_9f3a0c \(name)_in tcp flags rst accept")
            let drop = lines.firstIndex(of: "add rule inet offstage_9f3a0c \(name)_in drop comment \"\(name)\"")
            #expect(accept != nil && drop != nil && accept! < drop!, "the resets the app is sent come before the drop")
        }
    }

    @Test("SET-2: restricting, changing the restriction and lifting it only add and delete the app's elements in the refused maps")
    func restrictAndLift() {
        let cgroup = "unified/offstage.x/com.example.a"
        #expect(ruleset.restrict(cgroup, from: nil, to: nil) == "")
        #expect(ruleset.restrict(cgroup, from: .dataSaver, to: .dataSaver) == "")
        #expect(ruleset.restrict(cgroup, from: nil, to: .dataSaver).split(separator: "\n") == [
            "add element inet offstage_9f3a0c out_refused { \"\(cgroup)\" : goto data-saver_out }",
            "add element inet offstage_9f3a0c in_refused { \"\(cgroup)\" : goto data-saver_in }",
        ])
        #expect(ruleset.restrict(cgroup, from: .dataSaver, to: nil).split(separator: "\n") == [
            "delete element inet offstage_9f3a0c out_refused { \"\(cgroup)\" }",
            "delete element inet offstage_9f3a0c in_refused { \"\(cgroup)\" }",
        ])
        let changed = ruleset.restrict(cgroup, from: .dataSaver, to: .backgroundActivityOff).split(separator: "\n")
        #expect(changed.count == 4 && changed[0].hasPrefix("delete element") && changed[3].hasSuffix("goto background-activity-off_in }"))
        let rewritten = ruleset.refused(["b": .dataSaver, "a": .backgroundDataOff]).split(separator: "\n")
        #expect(Array(rewritten.prefix(2)) == ["flush map inet offstage_9f3a0c out_refused", "flush map inet offstage_9f3a0c in_refused"])
        #expect(rewritten.count == 6 && rewritten[2].contains("{ \"a\" : goto background-data-off_out }"))
    }

    @Test("SET-2: an app is added with its counting chains and map elements (refused ones too if restricted), and removed the same way")
    func registerAndUnregister() {
        let cgroup = "unified/offstage.x/com.example.a"
        let added = ruleset.register(slot, cgroup: cgroup, .backgroundDataOff)
        #expect(added.contains("add counter inet offstage_9f3a0c app7_out"))
        #expect(added.contains("add rule inet offstage_9f3a0c app7_out counter name \"app7_out\""))
        #expect(added.contains("add rule inet offstage_9f3a0c app7_in counter name \"app7_in\""))
        #expect(added.contains("add element inet offstage_9f3a0c out_apps { \"\(cgroup)\" : jump app7_out }"))
        #expect(added.contains("add element inet offstage_9f3a0c out_refused { \"\(cgroup)\" : goto background-data-off_out }"))
        #expect(!added.contains("flush") && !added.contains("reject"), "a new chain has nothing to flush, and only counts")
        #expect(!ruleset.register(slot, cgroup: cgroup, nil).contains("refused"))
        let removed = ruleset.unregister(slot, cgroup: cgroup, .backgroundDataOff)
        #expect(removed.hasPrefix("delete element inet offstage_9f3a0c out_refused { \"\(cgroup)\" }"))
        #expect(removed.contains("delete element inet offstage_9f3a0c out_apps { \"\(cgroup)\" }"))
        #expect(removed.contains("delete counter inet offstage_9f3a0c app7_in"))
        #expect(!ruleset.unregister(slot, cgroup: cgroup, nil).contains("refused"))
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

    /// The restrictions whose chains some app's packets go to, in a JSON listing of the table.
    func refused(_ listing: String?) -> Set<NetworkRestriction> {
        let compact = (listing ?? "").replacingOccurrences(of: " ", with: "")
        return Set(NetworkRestriction.allCases.filter { restriction in
            compact.contains("\"goto\":{\"target\":\"\(NetworkRuleset.chain(restriction, output: true))\"}")
                && compact.contains("\"goto\":{\"target\":\"\(NetworkRuleset.chain(restriction, output: false))\"}")
        })
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
        #expect(refused(text).isEmpty)
        filter.restrict(NetworkRulesChange([app: .backgroundDataOff]))
        filter.settle()
        text = try #require(try listing(filter))
        #expect(refused(text) == [.backgroundDataOff])
        #expect(filter.restrictions == [app: .backgroundDataOff])
        #expect(metrics.exposition().contains("offstage_network_rule_seconds_count 1"), "\(metrics.exposition())")
        filter.restrict(NetworkRulesChange([app: Optional<NetworkRestriction>.none]))
        filter.settle()
        #expect(refused(try listing(filter)).isEmpty)
        filter.restrict(NetworkRulesChange([app: .dataSaver]))
        filter.settle()
        filter.unregister(app)
        #expect(try #require(try listing(filter)).contains("app1_out") == false)
        #expect(try refused(listing(filter)).isEmpty, "a restricted app goes whole")
        #expect(filter.status.state == "enforced")
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
        #expect(refused(try listing(first)) == [.dataSaver])
        // The first is never stopped (as after kill -9): the second replaces its table, with nothing of the app.
        let second = NetworkFilter.start(instanceName: instance, control: control, logger: logger, metrics: DaemonMetrics())
        defer { second.stop() }
        #expect(refused(try listing(second)).isEmpty)
        // A group whose cgroup is gone: the kernel refuses the path, and the status says so.
        let gone = AppGroup(key: "gone", kind: .cgroupV2, directoryName: "gone", cgroupPath: group.cgroupPath! + "-gone")
        second.register("com.example.gone", gone, restriction: nil)
        #expect(second.status.state == "failing")
        #expect(second.status.detail.contains("adding com.example.gone"), "\(second.status.detail)")
        second.register(app, group, restriction: nil)
        second.restrict(NetworkRulesChange([app: .backgroundActivityOff]))
        second.settle()
        #expect(second.status.state == "enforced", "a batch that applies clears the failure")
        #expect(refused(try listing(second)) == [.backgroundActivityOff])
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
            #expect(refused(text).isEmpty, "\(text)")
            filter.restrict(NetworkRulesChange([app: .dataSaver]))
            filter.settle()
            #expect(refused(try listing(filter)) == [.dataSaver])
        }
    }

    @Test("SET-2: a change refused because the kernel no longer holds what the filter applied is reported, and the refused maps are rewritten from what was decided")
    func refusedMapsRewritten() throws {
        let instance = "t\(getpid())e"
        let (filter, control) = try makeFilter(instance)
        defer { filter.stop(); control.removeAll() }
        let apps: [AppID] = ["com.example.e1", "com.example.e2"]
        var groups: [AppGroup] = []
        defer { groups.forEach(control.removeGroup) }
        for app in apps {
            let group = try control.makeGroup(forApp: app.rawValue)
            groups.append(group)
            filter.register(app, group, restriction: .dataSaver)
        }
        guard case .enforced(let table) = filter.availability else { Issue.record("not enforced"); return }
        // Someone else empties the maps: the filter's lift of the first app deletes an element that is not there.
        try Nftables().run("flush map inet \(table) out_refused\nflush map inet \(table) in_refused\n")
        filter.liftNow(NetworkRulesChange([apps[0]: Optional<NetworkRestriction>.none]))
        #expect(filter.status.state == "failing" && filter.status.detail.contains("lifting 1 restrictions"), "\(filter.status.detail)")
        // Rewritten: the second app is refused again, the first is not.
        let text = try #require(try listing(filter))
        let compact = text.replacingOccurrences(of: " ", with: "")
        #expect(refused(text) == [.dataSaver])
        #expect(compact.components(separatedBy: "\"goto\":{\"target\":\"data-saver_out\"}").count - 1 == 1, "\(text)")
        filter.restrict(NetworkRulesChange([apps[1]: Optional<NetworkRestriction>.none]))
        filter.settle()
        #expect(filter.status.state == "enforced")
        #expect(try refused(listing(filter)).isEmpty)
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
