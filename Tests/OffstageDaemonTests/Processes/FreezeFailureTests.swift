import Foundation
import Glibc
import Testing

@testable import OffstageDaemon

/// Error paths of freeze, driven by forcing system calls to fail through `SyscallInterceptor` while real processes
/// run: whatever fails, the app must be left running, never half-frozen.
@Suite("Freeze failures", .serialized)
struct FreezeFailureTests {
    @Test(
        "A refused cgroup.freeze write throws and leaves the app running",
        .enabled(
            if: ProcessFixtures.availableKinds.contains(.cgroupV2),
            Comment(rawValue: "needs a writable cgroup v2 hierarchy: \(ProcessFixtures.unavailable[.cgroupV2] ?? "")")))
    func freezeWriteRefused() throws {
        let interceptor = SyscallInterceptor()
        try withHarness(.cgroupV2, interceptor: interceptor) { harness in
            let launch = try harness.spawn(ProcessFixtures.busyTree)
            interceptor.fail("write", targetSuffix: "/cgroup.freeze", detail: "1", errno: EIO, times: 1)
            let error = try #require(throws: ProcessControlError.self) {
                try harness.control.freeze(launch.group, leader: launch.leader)
            }
            #expect(error.errno == EIO)
            #expect(error.description.contains("cgroup.freeze failed: Input/output error"))
            let freezeFile = try #require(launch.group.cgroupPath) + "/cgroup.freeze"
            #expect(writes(interceptor, to: freezeFile) == ["1", "0"], "thawed on the error path")
            try expectRunning(harness, launch)
        }
    }

    @Test(
        "A failing confirmation after the group froze throws and thaws the group",
        .enabled(if: ProcessFixtures.hasCgroups, ProcessFixtures.noCgroupsMessage), arguments: confirmationCases)
    func confirmationFails(kind: FreezerKind, stateFile: String) throws {
        let interceptor = SyscallInterceptor()
        try withHarness(kind, interceptor: interceptor) { harness in
            let launch = try harness.spawn(ProcessFixtures.busyTree)
            _ = harness.members(launch, atLeast: 2)
            interceptor.fail("read", targetSuffix: stateFile, errno: EIO, times: 1)
            #expect(
                throws: ProcessControlError.systemCallFailed(
                    call: "read", target: launch.group.cgroupPath! + stateFile, errno: EIO)
            ) {
                try harness.control.freeze(launch.group, leader: launch.leader)
            }
            try expectRunning(harness, launch)
        }
    }

    static var confirmationCases: [(FreezerKind, String)] {
        ProcessFixtures.cgroupKinds.map { ($0, $0 == .cgroupV2 ? "/cgroup.events" : "/freezer.state") }
    }

    @Test(
        "A freeze the kernel never confirms times out within the bound and thaws the group",
        .enabled(if: ProcessFixtures.hasCgroups, ProcessFixtures.noCgroupsMessage), arguments: confirmationCases)
    func freezeTimesOut(kind: FreezerKind, stateFile: String) throws {
        let interceptor = SyscallInterceptor()
        try withHarness(kind, interceptor: interceptor, freezeTimeout: .milliseconds(100)) { harness in
            let launch = try harness.spawn(ProcessFixtures.busyTree)
            interceptor.replaceRead(
                targetSuffix: stateFile, with: kind == .cgroupV2 ? "populated 1\nfrozen 0\n" : "FREEZING\n")
            let started = ContinuousClock.now
            #expect(
                throws: ProcessControlError.freezeTimedOut(
                    app: "com.example.app", kind: kind, timeout: .milliseconds(100))
            ) {
                try harness.control.freeze(launch.group, leader: launch.leader)
            }
            let waited = ContinuousClock.now - started
            #expect(waited >= .milliseconds(100) && waited < .seconds(2), "bounded by the timeout: \(waited)")
            interceptor.removeRules()
            try expectRunning(harness, launch)
        }
    }

    @Test("A refused SIGSTOP throws and continues the processes already stopped")
    func signalStopRefused() throws {
        let interceptor = SyscallInterceptor()
        try withHarness(.signalStop, interceptor: interceptor) { harness in
            let launch = try harness.spawn(ProcessFixtures.busyTree)
            let tree = harness.members(launch, atLeast: 2)
            let child = try #require(tree.first { $0 != launch.leader })
            interceptor.fail("kill", targetSuffix: "\(child)", detail: "\(SIGSTOP)", errno: EPERM)
            #expect(throws: ProcessControlError.self) {
                try harness.control.freeze(launch.group, leader: launch.leader)
            }
            #expect(interceptor.records.contains { $0.call == "kill" && $0.detail == "\(SIGCONT)" })
            try expectRunning(harness, launch)
        }
    }

    private func writes(_ interceptor: SyscallInterceptor, to suffix: String) -> [String] {
        interceptor.records.filter { $0.call == "write" && $0.target.hasSuffix(suffix) }.map(\.detail)
    }

    // Not frozen by any measure: the flag says so and both processes keep using CPU.
    private func expectRunning(_ harness: ProcessHarness, _ launch: (group: AppGroup, leader: Int32)) throws {
        #expect(!harness.control.isFrozen(launch.group, leader: launch.leader))
        if let path = launch.group.cgroupPath {
            let events = (try? String(contentsOfFile: path + "/cgroup.events", encoding: .utf8)) ?? ""
            let state = (try? String(contentsOfFile: path + "/freezer.state", encoding: .utf8)) ?? ""
            #expect(!events.contains("frozen 1") && !state.contains("FROZEN"))
        }
        let tree = harness.members(launch, atLeast: 2)
        for pid in tree { #expect(ProcFS().stat(of: pid)?.isStopped == false) }
        let before = ProcessFixtures.cpuTicks(tree)
        #expect(
            ProcessFixtures.eventually {
                zip(before, ProcessFixtures.cpuTicks(tree)).allSatisfy { old, new in (new ?? 0) > (old ?? .max) }
            }, "the tree keeps running")
    }
}
