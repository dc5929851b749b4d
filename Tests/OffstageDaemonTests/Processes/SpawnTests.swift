import Foundation
import Glibc
import Testing

@testable import OffstageDaemon

@Suite("Spawning app processes")
struct SpawnTests {
    @Test("A SIGTERM the daemon ignores is not inherited: the app dies of SIGTERM")
    func inheritedIgnoreIsReset() throws {
        try withHarness(.signalStop) { harness in
            // The daemon runs with SIGTERM ignored (service-lifecycle does that), and an ignored signal survives exec.
            let previous = signal(SIGTERM, SIG_IGN)
            let launch: (group: AppGroup, leader: Int32)
            do {
                defer { signal(SIGTERM, previous) }
                launch = try harness.spawn(SpawnRequest(executable: "/bin/sleep", arguments: ["1000"]))
            }
            let status = try String(contentsOfFile: "/proc/\(launch.leader)/status", encoding: .utf8)
            #expect(status.contains("SigIgn:\t0000000000000000"), "no signal ignored in the app: \(status)")
            #expect(status.contains("SigBlk:\t0000000000000000"), "no signal blocked in the app")

            try harness.control.terminate(launch.group, leader: launch.leader)
            #expect(harness.recorder.status(of: launch.leader) == .signaled(SIGTERM))
        }
    }

    @Test("A missing executable throws with its path and the errno text, and leaves no process behind")
    func missingExecutable() throws {
        let interceptor = SyscallInterceptor()
        try withHarness(.signalStop, interceptor: interceptor) { harness in
            let path = "/nonexistent/offstage-\(UUID().uuidString)"
            let error = try #require(throws: ProcessControlError.self) {
                try harness.spawn(SpawnRequest(executable: path))
            }
            #expect(error == .cannotExecute(path: path, errno: ENOENT))
            #expect(error.description.hasPrefix("cannot execute \(path): No such file or directory"))
            try expectFailedChildReaped(interceptor)
        }
    }

    @Test(
        "A file without the execute bit throws 'Permission denied' naming it", arguments: ProcessFixtures.availableKinds
    )
    func nonExecutableFile(kind: FreezerKind) throws {
        let directory = try ProcessFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("not-executable").path
        try "#!/bin/sh\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        let interceptor = SyscallInterceptor()
        try withHarness(kind, interceptor: interceptor) { harness in
            let error = try #require(throws: ProcessControlError.self) {
                try harness.spawn(SpawnRequest(executable: path))
            }
            #expect(error.description.hasPrefix("cannot execute \(path): Permission denied"))
            try expectFailedChildReaped(interceptor)
            let group = try harness.control.makeGroup(forApp: "com.example.app")
            #expect(harness.control.members(of: group, leader: 0).isEmpty, "the failed child never stayed in the group")
        }
    }

    @Test("A missing working directory throws naming the directory")
    func missingWorkingDirectory() throws {
        try withHarness(.signalStop) { harness in
            let error = try #require(throws: ProcessControlError.self) {
                try harness.spawn(SpawnRequest(executable: "/bin/true", workingDirectory: "/nonexistent-offstage"))
            }
            #expect(error.description.contains("changing to directory /nonexistent-offstage failed: No such file"))
        }
    }

    @Test("A relative executable path is refused before anything is forked")
    func relativeExecutable() throws {
        try withHarness(.signalStop) { harness in
            #expect(throws: ProcessControlError.self) { try harness.spawn(SpawnRequest(executable: "bin/sleep")) }
        }
    }

    @Test(
        "The child is in its app cgroup when the program starts",
        .enabled(if: ProcessFixtures.hasCgroups, ProcessFixtures.noCgroupsMessage),
        arguments: ProcessFixtures.cgroupKinds)
    func childInCgroupBeforeExec(kind: FreezerKind) throws {
        let directory = try ProcessFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("cgroup.txt").path
        try withHarness(kind) { harness in
            // cat's first act is reading its own cgroup file: no fork, no shell in between.
            let launch = try harness.spawn(
                SpawnRequest(executable: "/bin/cat", arguments: ["/proc/self/cgroup"], outputPath: output),
                app: "com.example.finite-task")
            #expect(harness.recorder.status(of: launch.leader) == .exited(0))
            let lines = ProcessCgroupEntry.parse(try String(contentsOfFile: output, encoding: .utf8))
            let line = try #require(
                lines.first { kind == .cgroupV2 ? $0.isUnified : $0.controllers.contains("freezer") })
            #expect(line.path.hasSuffix("/offstage.\(harness.instanceName)/com.example.finite-task"), "\(line)")
        }
    }

    @Test("Output is appended to the file, stdin is empty, and environment and directory are as requested")
    func outputEnvironmentDirectory() throws {
        let directory = try ProcessFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("app.log").path
        try "earlier run\n".write(toFile: output, atomically: true, encoding: .utf8)
        try withHarness(.signalStop) { harness in
            let request = SpawnRequest(
                executable: "/bin/sh",
                arguments: ["-c", "echo out; echo err >&2; cat; pwd; echo \"$GREETING\"; echo \"${HOME:-no home}\""],
                environment: ["GREETING": "hello world"],
                workingDirectory: directory.path,
                outputPath: output)
            let launch = try harness.spawn(request)
            #expect(harness.recorder.status(of: launch.leader) == .exited(0))
            let text = try String(contentsOfFile: output, encoding: .utf8)
            let resolved = URL(fileURLWithPath: directory.path).resolvingSymlinksInPath().path
            #expect(text == "earlier run\nout\nerr\n\(resolved)\nhello world\nno home\n")
        }
    }

    @Test("The app is leader of its own process group and inherits no descriptor of the daemon")
    func processGroupAndDescriptors() throws {
        // A descriptor opened without close-on-exec, as careless library code might. Its number is whatever the
        // kernel gives: forcing a fixed number with dup2 could clobber a descriptor another test is using.
        let leaked = open("/dev/null", O_RDONLY)
        try #require(leaked >= 0)
        defer { close(leaked) }
        let directory = try ProcessFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("fds.txt").path
        try withHarness(.signalStop) { harness in
            let script =
                "if [ -e /proc/$$/fd/\(leaked) ]; then echo leaked; else echo closed; fi; "
                + "exec /bin/sleep 1000"
            let launch = try harness.spawn(
                SpawnRequest(executable: "/bin/sh", arguments: ["-c", script], outputPath: output))
            #expect(ProcFS().processGroup(of: launch.leader) == launch.leader)
            #expect(ProcessFixtures.eventually { (try? String(contentsOfFile: output, encoding: .utf8)) == "closed\n" })
        }
    }

    // The failed child was forked and must have been reaped by spawn itself.
    private func expectFailedChildReaped(_ interceptor: SyscallInterceptor) throws {
        let record = try #require(interceptor.records.last { $0.call == "spawn-failed" })
        let child = try #require(record.detail.split(separator: " ").last.flatMap { Int32($0) })
        #expect(child > 0)
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(child)"), "child \(child) was reaped")
    }
}
