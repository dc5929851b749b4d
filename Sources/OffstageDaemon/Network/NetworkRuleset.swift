import OffstageCore

/// The nftables commands of the daemon's own table (SPEC SET-2), as text for libnftables. Nothing here runs them.
///
/// The table is `inet offstage_<instance>` (named after the state folder, as the cgroups are), so two daemons never
/// touch each other's rules. Its `output` and `input` base chains send each packet of an app's socket, matched by
/// the app's cgroup (`socket cgroupv2`) in a verdict map, to a chain of the app's own. That chain counts the
/// packets in a named counter of the app's and, while the app is restricted, refuses them: on the way out a TCP
/// connection is reset and anything else answered "administratively prohibited", so the app's call fails at once
/// (`ECONNREFUSED`, `ECONNRESET`, `EPERM`) instead of waiting for a timeout; on the way in, packets for its sockets
/// are dropped, but for the resets that end its connections.
struct NetworkRuleset: Sendable, Hashable {
    /// The table's name.
    let table: String
    /// The depth of the apps' cgroups below the cgroup2 root (`offstage.<instance>/<app>`: 2 at the root).
    let level: Int

    /// The table for the daemon instance `instanceName`.
    init(instanceName: String, level: Int) {
        self.table = "offstage_" + String(instanceName.unicodeScalars.map { scalar in
            scalar.properties.isASCIIHexDigit || scalar == "_" ? Character(scalar) : "_"
        })
        self.level = level
    }

    /// The names of one app's chains and counters, by the number the filter gave it.
    struct Slot: Sendable, Hashable {
        let number: Int
        var output: String { "app\(number)_out" }
        var input: String { "app\(number)_in" }
    }

    /// Replaces whatever table of this name exists (one a killed daemon left) with an empty one: in one
    /// transaction, so no moment has two tables or none.
    func replaceTable() -> String {
        let socket = "socket cgroupv2 level \(level)"
        return """
            add table inet \(table)
            delete table inet \(table)
            add table inet \(table)
            add map inet \(table) out_apps { typeof \(socket) : verdict; }
            add map inet \(table) in_apps { typeof \(socket) : verdict; }
            add chain inet \(table) output { type filter hook output priority filter; policy accept; }
            add rule inet \(table) output \(socket) vmap @out_apps
            add chain inet \(table) input { type filter hook input priority filter; policy accept; }
            add rule inet \(table) input \(socket) vmap @in_apps

            """
    }

    /// Removes the table and every rule in it.
    func deleteTable() -> String { "delete table inet \(table)\n" }

    /// Adds an app: its counters and chains, its rules, and its cgroup in the maps. The cgroup must exist: the
    /// kernel knows it by its id, which the path is turned into now.
    func register(_ slot: Slot, cgroup: String, _ restriction: NetworkRestriction?) -> String {
        var text = ""
        for name in [slot.output, slot.input] {
            text += "add counter inet \(table) \(name)\n"
            text += "add chain inet \(table) \(name)\n"
        }
        text += rules(slot, restriction, flush: false)
        text += "add element inet \(table) out_apps { \(quoted(cgroup)) : jump \(slot.output) }\n"
        text += "add element inet \(table) in_apps { \(quoted(cgroup)) : jump \(slot.input) }\n"
        return text
    }

    /// Replaces the rules of a registered app: counted always, refused while restricted.
    func rules(_ slot: Slot, _ restriction: NetworkRestriction?, flush: Bool = true) -> String {
        var text = ""
        if flush {
            text += "flush chain inet \(table) \(slot.output)\n"
            text += "flush chain inet \(table) \(slot.input)\n"
        }
        text += "add rule inet \(table) \(slot.output) counter name \(quoted(slot.output))\n"
        text += "add rule inet \(table) \(slot.input) counter name \(quoted(slot.input))\n"
        if let restriction {
            let comment = "comment \(quoted(restriction.rawValue))"
            text += "add rule inet \(table) \(slot.output) meta l4proto tcp reject with tcp reset \(comment)\n"
            text += "add rule inet \(table) \(slot.output) reject with icmpx type admin-prohibited \(comment)\n"
            // The resets the rules above send the app come in through the input hook: they must reach it.
            text += "add rule inet \(table) \(slot.input) tcp flags rst accept\n"
            text += "add rule inet \(table) \(slot.input) drop \(comment)\n"
        }
        return text
    }

    /// Removes an app: its cgroup from the maps (which must still exist), then its chains and counters.
    func unregister(_ slot: Slot, cgroup: String) -> String {
        var text = ""
        text += "delete element inet \(table) out_apps { \(quoted(cgroup)) }\n"
        text += "delete element inet \(table) in_apps { \(quoted(cgroup)) }\n"
        for name in [slot.output, slot.input] {
            text += "flush chain inet \(table) \(name)\n"
            text += "delete chain inet \(table) \(name)\n"
            text += "delete counter inet \(table) \(name)\n"
        }
        return text
    }

    /// Lists the named counters of the apps given (bytes and packets, as JSON with the context's output flag).
    func listCounters(_ slots: [Slot]) -> String {
        slots.map { "list counter inet \(table) \($0.input)\nlist counter inet \(table) \($0.output)\n" }.joined()
    }

    /// Lists every counter of the table.
    func listCounters() -> String { "list counters table inet \(table)\n" }

    /// A string for nftables: cgroup directory names are escaped (``CgroupName``), so they hold no quote.
    private func quoted(_ text: String) -> String { "\"" + text + "\"" }
}
