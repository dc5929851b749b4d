import Foundation
import Glibc
import Testing

@testable import OffstageDaemon

@Suite("Parsing mountinfo, /proc and cgroup names")
struct ProcParsingTests {
    static let hybrid = """
        24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
        37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
        40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
        """

    @Test("mountinfo of a hybrid layout: cgroup2 at unified, the v1 freezer and memory controller beside it (MEM-2)")
    func hybridLayout() {
        let mounts = CgroupMounts.parse(mountInfo: Self.hybrid)
        #expect(mounts.unified == .init(mountPoint: "/sys/fs/cgroup/unified", root: "/", isReadOnly: false))
        #expect(mounts.freezer == .init(mountPoint: "/sys/fs/cgroup/freezer", root: "/", isReadOnly: false))
        #expect(mounts.memory == .init(mountPoint: "/sys/fs/cgroup/memory", root: "/", isReadOnly: false))
    }

    @Test("mountinfo of a pure cgroup2 layout (with optional fields) has no v1 freezer")
    func pureV2Layout() {
        let text = """
            22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
            26 24 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
            """
        let mounts = CgroupMounts.parse(mountInfo: text)
        #expect(mounts.unified?.mountPoint == "/sys/fs/cgroup")
        #expect(mounts.freezer == nil)
        #expect(mounts.memory == nil)
    }

    @Test("mountinfo without cgroups, and garbage lines, give no mounts")
    func noCgroups() {
        let text = """
            22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
            not a mountinfo line
            """
        #expect(CgroupMounts.parse(mountInfo: text) == CgroupMounts(unified: nil, freezer: nil))
        #expect(CgroupMounts.parse(mountInfo: "") == CgroupMounts(unified: nil, freezer: nil))
    }

    @Test("mountinfo: a co-mounted freezer, a container subtree root, an escaped space and a read-only mount")
    func unusualMounts() {
        let text = """
            50 31 0:40 /docker/abc /sys/fs/cgroup/cpu,freezer ro,relatime - cgroup cgroup ro,cpu,freezer
            52 31 0:42 /docker/abc /sys/fs/cgroup/memory,blkio rw,relatime - cgroup cgroup rw,memory,blkio
            51 31 0:41 / /mnt/my\\040cgroup rw,relatime - cgroup2 none rw
            """
        let mounts = CgroupMounts.parse(mountInfo: text)
        #expect(
            mounts.freezer == .init(mountPoint: "/sys/fs/cgroup/cpu,freezer", root: "/docker/abc", isReadOnly: true))
        #expect(
            mounts.memory == .init(mountPoint: "/sys/fs/cgroup/memory,blkio", root: "/docker/abc", isReadOnly: false))
        #expect(mounts.unified?.mountPoint == "/mnt/my cgroup")
    }

    @Test("This machine's mountinfo parses")
    func currentMounts() throws {
        let text = try String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
        #expect(CgroupMounts.current() == CgroupMounts.parse(mountInfo: text))
    }

    @Test("/proc/PID/stat with a command containing ') (' and spaces")
    func statWithParentheses() throws {
        let text =
            "4242 (evil) (name x) S 1 4242 4242 0 -1 4194560 100 0 0 0 25 7 0 0 20 0 1 0 987654 1000 200 "
            + "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
        let stat = try #require(ProcFS.parseStat(text))
        #expect(stat.pid == 4242)
        #expect(stat.command == "evil) (name x")
        #expect(stat.state == "S")
        #expect(stat.parentPid == 1 && stat.processGroup == 4242 && stat.session == 4242)
        #expect(stat.userTicks == 25 && stat.systemTicks == 7 && stat.cpuTicks == 32)
        #expect(stat.startTime == 987654)
        #expect(ProcFS.parseStat("4242 (truncated) S 1") == nil)
        #expect(ProcFS.parseStat("") == nil)
    }

    @Test("ProcFS reads the test process itself")
    func readsSelf() throws {
        let procFS = ProcFS()
        let stat = try #require(procFS.stat(of: getpid()))
        #expect(stat.pid == getpid())
        #expect(stat.parentPid == getppid())
        #expect(procFS.isAlive(pid: getpid(), startTime: stat.startTime))
        #expect(!procFS.isAlive(pid: getpid(), startTime: stat.startTime + 1))
        #expect(
            procFS.executablePath(of: getpid())
                == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
        #expect(procFS.cgroups(of: getpid()).contains { $0.isUnified } == (CgroupMounts.current().unified != nil))
        #expect(procFS.allPids().contains(getpid()))
        #expect(ProcFS.clockTicksPerSecond > 0)
        #expect(procFS.stat(of: 0) == nil)
    }

    @Test("/proc/PID/cgroup lines, including a path with ':'")
    func cgroupLines() {
        let entries = ProcessCgroupEntry.parse("6:freezer:/offstage.x/app\n4:cpu,cpuacct:/\n0::/a:b\n")
        #expect(
            entries == [
                .init(hierarchyID: 6, controllers: ["freezer"], path: "/offstage.x/app"),
                .init(hierarchyID: 4, controllers: ["cpu", "cpuacct"], path: "/"),
                .init(hierarchyID: 0, controllers: [], path: "/a:b"),
            ])
        #expect(entries[2].isUnified && !entries[0].isUnified)
    }

    @Test(
        "Bundle ids stay readable as cgroup names; anything else is escaped reversibly",
        arguments: [
            ("com.example.finite-task", "com.example.finite-task"),
            ("../etc", "%2E.%2Fetc"),
            (".hidden", "%2Ehidden"),
            ("a/b", "a%2Fb"),
            ("100%", "100%25"),
            ("cgroup.procs", "%63group.procs"),
            ("tasks", "%74asks"),
            ("ünï", "%C3%BCn%C3%AF"),
        ])
    func cgroupNames(name: String, escaped: String) throws {
        #expect(try CgroupName.escape(name) == escaped)
        #expect(CgroupName.unescape(escaped) == name)
        #expect(!escaped.contains("/") && !escaped.hasPrefix("."))
    }

    @Test("Names that cannot become a cgroup are refused")
    func invalidNames() {
        #expect(throws: ProcessControlError.self) { try CgroupName.escape("") }
        #expect(throws: ProcessControlError.self) { try CgroupName.escape(String(repeating: "/", count: 100)) }
        #expect(CgroupName.unescape("bad%zz") == nil)
        #expect(CgroupName.unescape("has space") == nil)
    }

    @Test("appKey reads the key back from a cgroup path of this instance only")
    func appKeyFromPath() throws {
        let mount = CgroupMounts.Mount(mountPoint: "/sys/fs/cgroup", root: "/", isReadOnly: false)
        let hierarchy = try CgroupHierarchy(kind: .cgroupV2, mount: mount, instanceName: "abc", syscalls: .live)
        #expect(hierarchy.appKey(cgroupPath: "/offstage.abc/com.example.app") == "com.example.app")
        #expect(hierarchy.appKey(cgroupPath: "/offstage.abc/%2Ehidden/sub") == ".hidden")
        #expect(hierarchy.appKey(cgroupPath: "/offstage.other/com.example.app") == nil)
        #expect(hierarchy.appKey(cgroupPath: "/") == nil)
        let nested = CgroupMounts.Mount(mountPoint: "/sys/fs/cgroup", root: "/docker/c1", isReadOnly: false)
        let inContainer = try CgroupHierarchy(kind: .cgroupV2, mount: nested, instanceName: "abc", syscalls: .live)
        #expect(inContainer.appKey(cgroupPath: "/docker/c1/offstage.abc/x") == "x")
    }

    @Test("Error messages name the thing and the fix")
    func errorMessages() {
        #expect(
            ProcessControlError.cannotExecute(path: "/a/b", errno: EACCES).description
                == "cannot execute /a/b: Permission denied; "
                + "check that it exists, is a regular file and is executable (chmod +x)"
        )
        #expect(
            ProcessControlError.systemCallFailed(call: "mkdir", target: "/x", errno: EROFS).description
                .contains("read-only"))
        #expect(
            ProcessControlError.freezeTimedOut(app: "a", kind: .cgroupV1, timeout: .milliseconds(100)).description
                .contains("thawed again"))
    }
}
