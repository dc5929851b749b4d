import OffstageCore

/// The nftables commands of the daemon's own table (SPEC SET-2), as text for libnftables. Nothing here runs them.
///
/// The table is `inet offstage_<instance>` (named after the state folder, as the cgroups are), so two daemons never
/// touch each other's rules. Its `output` and `input` base chains look each packet of an app's socket up by the app's
/// cgroup (`socket cgroupv2`) in two verdict maps:
/// - `out_apps` / `in_apps` send it to a chain of the app's own, which counts it in a named counter of the app's and
///   returns;
/// - `out_refused` / `in_refused` hold the restricted apps only, and send theirs to the chain of the restriction (one
///   per ``NetworkRestriction``, shared by every app it holds). On the way out a TCP connection is reset and anything
///   else answered "administratively prohibited", so the app's call fails at once (`ECONNREFUSED`, `ECONNRESET`,
///   `EPERM`) instead of waiting for a timeout; on the way in, packets for its sockets are dropped, but for the resets
///   that end its connections.
///
/// So restricting an app, or lifting it, is adding or deleting its two map elements: no rule is written or removed, and
/// the lift an app coming to the front waits for is the smallest change the kernel can make.
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

    /// The chain a restriction sends an app's packets to, on the way out or in: `background-data-off_out` …
    static func chain(_ restriction: NetworkRestriction, output: Bool) -> String {
        restriction.rawValue + (output ? "_out" : "_in")
    }

    /// Replaces whatever table of this name exists (one a killed daemon left) with an empty one: in one
    /// transaction, so no moment has two tables or none.
    func replaceTable() -> String {
        let socket = "socket cgroupv2 level \(level)"
        var text = """
            add table inet \(table)
            delete table inet \(table)
            add table inet \(table)

            """
        for map in ["out_apps", "in_apps", "out_refused", "in_refused"] {
            text += "add map inet \(table) \(map) { typeof \(socket) : verdict; }\n"
        }
        for restriction in NetworkRestriction.allCases {
            let (output, input) = (Self.chain(restriction, output: true), Self.chain(restriction, output: false))
            let comment = "comment \(quoted(restriction.rawValue))"
            text += "add chain inet \(table) \(output)\n"
            text += "add rule inet \(table) \(output) meta l4proto tcp reject with tcp reset \(comment)\n"
            text += "add rule inet \(table) \(output) reject with icmpx type admin-prohibited \(comment)\n"
            text += "add chain inet \(table) \(input)\n"
            // The resets the rules above send the app come in through the input hook: they must reach it.
            text += "add rule inet \(table) \(input) tcp flags rst accept\n"
            text += "add rule inet \(table) \(input) drop \(comment)\n"
        }
        text += """
            add chain inet \(table) output { type filter hook output priority filter; policy accept; }
            add rule inet \(table) output \(socket) vmap @out_apps
            add rule inet \(table) output \(socket) vmap @out_refused
            add chain inet \(table) input { type filter hook input priority filter; policy accept; }
            add rule inet \(table) input \(socket) vmap @in_apps
            add rule inet \(table) input \(socket) vmap @in_refused

            """
        return text
    }

    /// Removes the table and every rule in it.
    func deleteTable() -> String { "delete table inet \(table)\n" }

    /// Adds an app: its counters and counting chains, its cgroup in the maps, and in the refused ones if restricted.
    /// The cgroup must exist: the kernel knows it by its id, which the path is turned into now.
    func register(_ slot: Slot, cgroup: String, _ restriction: NetworkRestriction?) -> String {
        var text = ""
        for name in [slot.output, slot.input] {
            text += "add counter inet \(table) \(name)\n"
            text += "add chain inet \(table) \(name)\n"
            text += "add rule inet \(table) \(name) counter name \(quoted(name))\n"
        }
        text += "add element inet \(table) out_apps { \(quoted(cgroup)) : jump \(slot.output) }\n"
        text += "add element inet \(table) in_apps { \(quoted(cgroup)) : jump \(slot.input) }\n"
        return text + restrict(cgroup, from: nil, to: restriction)
    }

    /// Moves an app's cgroup from one restriction to another (nil: none): its elements in the refused maps.
    func restrict(_ cgroup: String, from before: NetworkRestriction?, to after: NetworkRestriction?) -> String {
        guard before != after else { return "" }
        var text = ""
        if before != nil {
            text += "delete element inet \(table) out_refused { \(quoted(cgroup)) }\n"
            text += "delete element inet \(table) in_refused { \(quoted(cgroup)) }\n"
        }
        if let after {
            text += "add element inet \(table) out_refused { \(quoted(cgroup)) : goto \(Self.chain(after, output: true)) }\n"
            text += "add element inet \(table) in_refused { \(quoted(cgroup)) : goto \(Self.chain(after, output: false)) }\n"
        }
        return text
    }

    /// Puts exactly the restrictions given in the refused maps (cgroup → restriction), whatever they held: after a
    /// refused change, when what the kernel has is no longer known.
    func refused(_ restrictions: [String: NetworkRestriction]) -> String {
        var text = "flush map inet \(table) out_refused\nflush map inet \(table) in_refused\n"
        for (cgroup, restriction) in restrictions.sorted(by: { $0.key < $1.key }) {
            text += restrict(cgroup, from: nil, to: restriction)
        }
        return text
    }

    /// Removes an app: its cgroup from the maps (which must still exist), then its chains and counters.
    func unregister(_ slot: Slot, cgroup: String, _ restriction: NetworkRestriction?) -> String {
        var text = restrict(cgroup, from: restriction, to: nil)
        text += "delete element inet \(table) out_apps { \(quoted(cgroup)) }\n"
        text += "delete element inet \(table) in_apps { \(quoted(cgroup)) }\n"
        for name in [slot.output, slot.input] {
            text += "flush chain inet \(table) \(name)\n"
            text += "delete chain inet \(table) \(name)\n"
            text += "delete counter inet \(table) \(name)\n"
        }
        return text
    }

    /// A string for nftables: cgroup directory names are escaped (``CgroupName``), so they hold no quote.
    private func quoted(_ text: String) -> String { "\"" + text + "\"" }
}
