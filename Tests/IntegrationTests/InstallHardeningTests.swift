import Foundation
import OffstageProtocol
import Testing

/// Install, uninstall and open on the real daemon, as they were found to fail from outside: what a reply acknowledges
/// survives a crash, no process escapes the daemon's watch, no copy is left behind, bundles are self-contained.
@Suite("Installing and uninstalling, hardened (SPEC MAN-2, MAN-3, LC-5)", .serialized)
struct InstallHardeningTests {
    static let hanging = "com.example.hanging-terminate"
    static let finite = "com.example.finite-task"
    /// An app that hangs in will-terminate, so its uninstall takes the whole will-terminate limit and grace.
    static var hangsOnTerminate: [String: Any] { ["OffstageLinux": ["Arguments": ["--hang-on-terminate"]]] }

    /// Starts `offstage uninstall ID` without waiting for it.
    func startUninstall(_ daemon: DaemonHarness, _ id: String) throws -> Process {
        let process = Process()
        process.executableURL = DaemonHarness.products.appendingPathComponent("offstage")
        process.arguments = ["--socket", daemon.socket, "uninstall", id]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        daemon.track(process.processIdentifier)
        return process
    }

    /// The folders of installed bundles in the daemon's state.
    func bundleFolders(_ daemon: DaemonHarness) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/bundles")) ?? []).sorted()
    }

    @Test("MAN-3: uninstall of a running app returns once the app is gone: process ended, bundle and data removed")
    func uninstallReturnsWhenGone() throws {
        try withDaemon { daemon in
            try daemon.install("ExitsOnSuspend", id: Self.hanging, Self.hangsOnTerminate)
            try daemon.ok("open", Self.hanging)
            try daemon.waitFor(Self.hanging, "active")
            let pid = try #require(try daemon.app(Self.hanging).pid)
            let started = Date()
            try daemon.ok("uninstall", Self.hanging)
            // It had to wait for the watchdog: will-terminate limit (1 s here) and SIGTERM grace (0.4 s).
            #expect(Date().timeIntervalSince(started) >= 1.0)
            #expect(!ProcessProbe.isAlive(pid), "the process is gone when the call returns")
            #expect(try daemon.apps().isEmpty)
            #expect(bundleFolders(daemon).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/data/" + Self.hanging))
        }
    }

    @Test("MAN-3: kill -9 of the daemon while an acknowledged uninstall is pending: the restart finishes it")
    func crashDuringPendingUninstall() throws {
        try withDaemon { daemon in
            try daemon.install("ExitsOnSuspend", id: Self.hanging, Self.hangsOnTerminate)
            try daemon.install("FiniteTask", id: Self.finite)
            try daemon.ok("open", Self.hanging)
            try daemon.waitFor(Self.hanging, "active")
            let pid = try #require(try daemon.app(Self.hanging).pid)
            let uninstall = try startUninstall(daemon, Self.hanging)
            try daemon.waitUntil("the uninstall is requested") {
                try daemon.log(Self.hanging).contains { $0.message.hasPrefix("uninstall requested") }
            }
            daemon.crash()
            uninstall.waitUntilExit()
            #expect(ProcessProbe.isAlive(pid), "the app outlived the daemon, hanging in will-terminate")
            try daemon.start()
            try daemon.waitUntil("the process is gone") { !ProcessProbe.isAlive(pid) }
            try daemon.waitUntil("the app is forgotten") { try daemon.apps().map(\.id) == [Self.finite] }
            #expect(bundleFolders(daemon).count == 1, "only the other app's bundle is left")
            // And it stays gone across another restart.
            daemon.stop()
            try daemon.start()
            #expect(try daemon.apps().map(\.id) == [Self.finite])
        }
    }

    @Test("MAN-3: uninstall then install of the same id, back to back: the old process is ended, the new app is fresh")
    func uninstallThenInstallBackToBack() throws {
        try withDaemon { daemon in
            try daemon.install("ExitsOnSuspend", id: Self.hanging, Self.hangsOnTerminate)
            try daemon.ok("settings", "--app", Self.hanging, "notifications=off")
            try daemon.ok("open", Self.hanging)
            try daemon.waitFor(Self.hanging, "active")
            let old = try #require(try daemon.app(Self.hanging).pid)
            try daemon.ok("uninstall", Self.hanging)
            try daemon.install("ExitsOnSuspend", id: Self.hanging)
            #expect(!ProcessProbe.isAlive(old))
            let app = try daemon.app(Self.hanging)
            #expect(app.state == "notRunning" && app.pid == nil)
            let settings = try daemon.ok("settings", "--app", Self.hanging)
            #expect(settings.split(separator: "\n").contains { $0.hasPrefix("notifications ") && $0.contains(" on ") })
            try daemon.ok("open", Self.hanging)
            try daemon.waitFor(Self.hanging, "active")
            let new = try #require(try daemon.app(Self.hanging).pid)
            #expect(new != old)
            // A graceful stop ends it: nothing survives the daemon.
            daemon.stop()
            #expect(!ProcessProbe.isAlive(new))
        }
    }

    @Test("MAN-3: an install while another caller's uninstall is still finishing is refused with the reason")
    func installDuringPendingUninstallIsRefused() throws {
        try withDaemon { daemon in
            try daemon.install("ExitsOnSuspend", id: Self.hanging, Self.hangsOnTerminate)
            try daemon.ok("open", Self.hanging)
            try daemon.waitFor(Self.hanging, "active")
            let uninstall = try startUninstall(daemon, Self.hanging)
            try daemon.waitUntil("the uninstall is requested") {
                try daemon.log(Self.hanging).contains { $0.message.hasPrefix("uninstall requested") }
            }
            let bundle = try daemon.bundle("ExitsOnSuspend", id: Self.hanging)
            let refused = try daemon.cli(["install", bundle])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("still being uninstalled"))
            #expect(refused.stderr.contains("install it again once"))
            let opened = try daemon.cli(["open", Self.hanging])
            #expect(opened.status == 3 && opened.stderr.contains("being uninstalled"), "\(opened.stderr)")
            uninstall.waitUntilExit()
            #expect(uninstall.terminationStatus == 0)
            #expect(try daemon.apps().isEmpty)
            #expect(bundleFolders(daemon).isEmpty, "the refused copy was removed")
        }
    }

    @Test("MAN-3: copies left by an install, upgrade or uninstall cut short by a crash are removed at start-up")
    func leftoversAreSweptAtStart() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.install("FiniteTask", id: Self.finite)
        let installed = bundleFolders(daemon)
        #expect(installed.count == 1 && installed[0].hasPrefix(Self.finite + "@"))
        daemon.crash()
        let bundles = daemon.stateDirectory + "/bundles/"
        for junk in [".staging-1f2e3d", Self.finite + "@dead", "com.example.gone@beef"] {
            try FileManager.default.createDirectory(atPath: bundles + junk, withIntermediateDirectories: true)
            try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: bundles + junk + "/payload"))
        }
        try FileManager.default.createDirectory(
            atPath: daemon.stateDirectory + "/data/com.example.gone", withIntermediateDirectories: true)
        try daemon.start()
        #expect(bundleFolders(daemon) == installed)
        #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/data/com.example.gone"))
        #expect(FileManager.default.fileExists(atPath: daemon.stateDirectory + "/data/" + Self.finite))
        try daemon.ok("open", Self.finite)
        try daemon.waitFor(Self.finite, "active")
    }

    @Test("MAN-3: an upgrade installs a new folder and removes the old one once written")
    func upgradeReplacesFolder() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.finite)
            let first = bundleFolders(daemon)
            try daemon.install("FiniteTask", id: Self.finite)
            try daemon.waitUntil("the old folder is removed") { self.bundleFolders(daemon).count == 1 }
            #expect(bundleFolders(daemon) != first)
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
        }
    }

    @Test("MAN-2: links leaving the bundle are refused, naming the link and the fix; links inside are copied")
    func symlinksInBundles() throws {
        try withDaemon { daemon in
            let fileManager = FileManager.default
            // The executable linked to a system interpreter: refused, nothing installed.
            let interpreter = try daemon.bundle("FiniteTask", id: "com.example.python")
            try fileManager.removeItem(atPath: interpreter + "/FiniteTask")
            try fileManager.createSymbolicLink(atPath: interpreter + "/FiniteTask", withDestinationPath: "/bin/sh")
            var output = try daemon.cli(["install", interpreter])
            #expect(output.status == 4, "\(output.stderr)")
            #expect(output.stderr.contains(interpreter + "/FiniteTask") && output.stderr.contains("outside the bundle"))
            #expect(output.stderr.contains("cp -L"))
            // Info.plist linked to a file outside the bundle.
            let outside = try daemon.bundle("FiniteTask", id: "com.example.outside")
            try fileManager.moveItem(atPath: outside + "/Info.plist", toPath: daemon.root.path + "/Info.plist")
            try fileManager.createSymbolicLink(atPath: outside + "/Info.plist", withDestinationPath: daemon.root.path + "/Info.plist")
            output = try daemon.cli(["install", outside])
            #expect(output.status == 4 && output.stderr.contains("Info.plist") && output.stderr.contains("outside the bundle"))
            #expect(try daemon.apps().isEmpty)
            #expect(bundleFolders(daemon).isEmpty)

            // The executable linked to a file inside the bundle, and a folder linked inside: copied as real ones.
            let inside = try daemon.bundle("FiniteTask", id: Self.finite)
            try fileManager.createDirectory(atPath: inside + "/bin", withIntermediateDirectories: true)
            try fileManager.moveItem(atPath: inside + "/FiniteTask", toPath: inside + "/bin/FiniteTask")
            try fileManager.createSymbolicLink(atPath: inside + "/FiniteTask", withDestinationPath: "bin/FiniteTask")
            try fileManager.createSymbolicLink(atPath: inside + "/tools", withDestinationPath: "bin")
            try daemon.ok("install", inside)
            let folder = daemon.stateDirectory + "/bundles/" + bundleFolders(daemon)[0]
            for path in ["/FiniteTask", "/tools", "/tools/FiniteTask", "/Info.plist"] {
                let attributes = try fileManager.attributesOfItem(atPath: folder + path)
                #expect(attributes[.type] as? FileAttributeType != .typeSymbolicLink, "\(path) is a copy")
            }
            // Editing the user's folder afterwards changes nothing installed.
            try Data("#!/bin/sh\nexit 3\n".utf8).write(to: URL(fileURLWithPath: inside + "/bin/FiniteTask"))
            try daemon.ok("open", Self.finite)
            try daemon.waitFor(Self.finite, "active")
        }
    }

    @Test("LC-2: open reports the failure, with the reason and a non-zero exit, when the executable cannot be started")
    func openOfUnstartableExecutable() throws {
        try withDaemon { daemon in
            let bundle = try daemon.bundle("FiniteTask", id: "com.example.garbage")
            try Data("this is not a program\n".utf8).write(to: URL(fileURLWithPath: bundle + "/FiniteTask"))
            try daemon.ok("install", bundle)
            let output = try daemon.cli(["open", "com.example.garbage"])
            #expect(output.status == 1, "\(output.stdout)")
            #expect(output.stderr.contains("did not open") && output.stderr.contains("could not be launched"))
            #expect(output.stderr.contains("offstage log --app com.example.garbage"))
            let app = try daemon.app("com.example.garbage")
            #expect(app.state == "notRunning")
        }
    }
}
