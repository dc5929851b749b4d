/// Finds the processes of an app's tree from `/proc` where no cgroup holds them.
struct ProcessTree: Sendable {
    let procFS: ProcFS

    /// The live (non-zombie) processes whose process group is `leader`, plus every descendant of those and of
    /// the leader: a child that called setsid/setpgid left the group but is still in the tree.
    func members(ofLeader leader: Int32) -> [Int32] {
        // Pid 0 and 1 are not app leaders, and the whole machine descends from pid 1.
        guard leader > 1 else { return [] }
        let stats = procFS.allStats()
        // A leader that is the daemon or one of its ancestors would make the daemon's own tree "the app".
        let daemon = procFS.syscalls.currentProcessID()
        let parents = Dictionary(stats.map { ($0.pid, $0.parentPid) }, uniquingKeysWith: { first, _ in first })
        var ancestor: Int32? = daemon
        while let pid = ancestor, pid > 0 {
            if pid == leader { return [] }
            ancestor = parents[pid]
        }
        var children: [Int32: [Int32]] = [:]
        for stat in stats { children[stat.parentPid, default: []].append(stat.pid) }
        var found = Set(stats.filter { $0.processGroup == leader }.map(\.pid))
        if stats.contains(where: { $0.pid == leader }) { found.insert(leader) }
        var queue = Array(found)
        while let pid = queue.popLast() {
            for child in children[pid] ?? [] where found.insert(child).inserted {
                queue.append(child)
            }
        }
        let live = Set(stats.filter { !$0.isZombie && $0.pid != daemon }.map(\.pid))
        return found.filter { live.contains($0) }.sorted()
    }

    /// Whether `pid` is the daemon itself or one of its ancestors, which must never be treated as an app.
    func isDaemonOrAncestor(_ pid: Int32) -> Bool {
        var current = procFS.syscalls.currentProcessID()
        while current > 0 {
            if current == pid { return true }
            guard let parent = procFS.parentPid(of: current) else { return false }
            current = parent
        }
        return false
    }

    /// `roots` and all their descendants, parents before children.
    func descendants(of roots: [Int32]) -> [Int32] {
        let stats = procFS.allStats()
        var children: [Int32: [Int32]] = [:]
        for stat in stats { children[stat.parentPid, default: []].append(stat.pid) }
        var ordered: [Int32] = []
        var seen = Set<Int32>()
        var queue = roots[...]
        while let pid = queue.popFirst() {
            guard seen.insert(pid).inserted else { continue }
            ordered.append(pid)
            queue.append(contentsOf: (children[pid] ?? []).sorted())
        }
        return ordered
    }
}
