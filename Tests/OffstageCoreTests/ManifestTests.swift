import Foundation
import OffstageCore
import OffstageSimulator
import Testing

@Suite("Manifests (SPEC MAN)")
struct ManifestTests {
    static let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>CFBundleIdentifier</key><string>com.example.refresh</string>
            <key>CFBundleExecutable</key><string>Refresh</string>
            <key>UIBackgroundModes</key><array><string>fetch</string><string>processing</string></array>
            <key>BGTaskSchedulerPermittedIdentifiers</key><array><string>com.example.refresh</string></array>
            <key>UIApplicationExitsOnSuspend</key><false/>
            <key>OffstageLinux</key>
            <dict>
                <key>Arguments</key><array><string>--verbose</string></array>
                <key>Environment</key><dict><key>LANG</key><string>C.UTF-8</string></dict>
                <key>MemoryLimitMB</key><integer>128</integer>
            </dict>
        </dict>
        </plist>
        """

    func parse(_ text: String, format: ManifestParser.Format = .propertyList) throws(ManifestError) -> Manifest {
        try ManifestParser.parse(Data(text.utf8), file: "Bundle/Info.plist", format: format)
    }

    func plist(_ body: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict>\(body)</dict></plist>"
    }

    @Test("MAN-1: an XML Info.plist with every key is read")
    func readsPropertyList() throws {
        let manifest = try parse(Self.plist)
        #expect(manifest.id == "com.example.refresh")
        #expect(manifest.executable == "Refresh")
        #expect(manifest.backgroundModes == [.fetch, .processing])
        #expect(manifest.permittedTaskIdentifiers == ["com.example.refresh"])
        #expect(manifest.exitsOnSuspend == false)
        #expect(manifest.linux == .init(arguments: ["--verbose"], environment: ["LANG": "C.UTF-8"], memoryLimitMB: 128))
    }

    @Test("MAN-1: a JSON manifest with the same keys is read the same")
    func readsJSON() throws {
        let json = """
            {"CFBundleIdentifier": "com.example.refresh", "CFBundleExecutable": "Refresh",
             "UIBackgroundModes": ["fetch", "processing"], "BGTaskSchedulerPermittedIdentifiers": ["com.example.refresh"],
             "UIApplicationExitsOnSuspend": false,
             "OffstageLinux": {"Arguments": ["--verbose"], "Environment": {"LANG": "C.UTF-8"}, "MemoryLimitMB": 128}}
            """
        #expect(try parse(json, format: .json) == parse(Self.plist))
    }

    @Test("MAN-1: only the identifier and the executable are required")
    func minimalManifest() throws {
        let manifest = try parse(plist("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>x</string>"))
        #expect(manifest.backgroundModes.isEmpty && !manifest.exitsOnSuspend && manifest.permittedTaskIdentifiers.isEmpty)
    }

    @Test(
        "MAN-2: a bad manifest is refused naming the file, the key and the fix",
        arguments: [
            ("<key>CFBundleExecutable</key><string>x</string>", "CFBundleIdentifier", "is missing"),
            ("<key>CFBundleIdentifier</key><string>a.b</string>", "CFBundleExecutable", "is missing"),
            ("<key>CFBundleIdentifier</key><string>a b/c</string><key>CFBundleExecutable</key><string>x</string>",
             "CFBundleIdentifier", "not a bundle identifier"),
            ("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>../x</string>",
             "CFBundleExecutable", "not a file name"),
            ("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>x</string>"
             + "<key>UIBackgroundModes</key><array><string>teleport</string></array>", "UIBackgroundModes",
             "unknown mode 'teleport'"),
            ("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>x</string>"
             + "<key>UIBackgroundModes</key><string>fetch</string>", "UIBackgroundModes", "wrong type"),
            ("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>x</string>"
             + "<key>UIApplicationExitsOnSuspend</key><string>yes</string>", "UIApplicationExitsOnSuspend",
             "wrong type"),
            ("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>x</string>"
             + "<key>OffstageLinux</key><dict><key>MemoryLimitMB</key><integer>-1</integer></dict>",
             "OffstageLinux.MemoryLimitMB", "must be from 1 to 1048576 (1 TiB), got -1"),
            ("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>x</string>"
             + "<key>OffstageLinux</key><dict><key>MemoryLimitMB</key><integer>9223372036854775807</integer></dict>",
             "OffstageLinux.MemoryLimitMB", "must be from 1 to 1048576 (1 TiB), got 9223372036854775807"),
            ("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>x</string>"
             + "<key>OffstageLinux</key><dict><key>Arguments</key><string>-v</string></dict>",
             "OffstageLinux.Arguments", "wrong type"),
        ])
    func refusesBadManifest(body: String, key: String, problem: String) {
        #expect {
            _ = try parse(plist(body))
        } throws: { error in
            guard let error = error as? ManifestError else { return false }
            return error.file == "Bundle/Info.plist" && error.key == key && error.problem.contains(problem)
                && !error.fix.isEmpty && error.description.contains(key)
        }
    }

    @Test(
        "MAN-2: a key of the wrong type is refused with the type it must have",
        arguments: [
            ("<key>UIBackgroundModes</key><string>fetch</string>", "UIBackgroundModes", "an array of strings"),
            ("<key>BGTaskSchedulerPermittedIdentifiers</key><dict/>", "BGTaskSchedulerPermittedIdentifiers",
             "an array of strings"),
            ("<key>OffstageLinux</key><dict><key>Arguments</key><string>-v</string></dict>", "OffstageLinux.Arguments",
             "an array of strings"),
            ("<key>OffstageLinux</key><dict><key>Environment</key><array/></dict>", "OffstageLinux.Environment",
             "a dictionary"),
            ("<key>OffstageLinux</key><string>x</string>", "OffstageLinux", "a dictionary"),
            ("<key>UIApplicationExitsOnSuspend</key><string>yes</string>", "UIApplicationExitsOnSuspend", "a boolean"),
        ])
    func wrongTypeNamesTheType(body: String, key: String, type: String) {
        let base = "<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>x</string>"
        #expect {
            _ = try parse(plist(base + body))
        } throws: { error in
            guard let error = error as? ManifestError else { return false }
            return error.key == key && error.fix.hasPrefix("make it \(type)")
        }
    }

    @Test("MAN-2: a file that is not a property list is refused with the fix")
    func refusesGarbage() {
        #expect {
            _ = try parse("<plist><dict><key>x</key></plist>")
        } throws: { error in
            (error as? ManifestError)?.problem.contains("not a valid property list") == true
        }
        #expect {
            _ = try parse("{ not json", format: .json)
        } throws: { error in
            (error as? ManifestError)?.problem.contains("not a valid JSON") == true
        }
    }

    @Test("MAN-3: installing the same id again upgrades in place and keeps the user's settings")
    func upgradeKeepsSettings() throws {
        var core = OffstageCore()
        let now = Instant(secondsSinceEpoch: 1)
        _ = try core.install(InstalledApp(manifest: manifest(appA), bundlePath: "/v1", installedAt: now), at: now)
        var settings = AppSettings()
        settings.backgroundRefresh = false
        _ = try core.setAppSettings(settings, for: appA, at: now)
        _ = try core.forceQuit(appA, at: now)
        let (outcome, _) = try core.install(
            InstalledApp(manifest: manifest(appA, modes: [.fetch]), bundlePath: "/v2", installedAt: now), at: now)
        #expect(outcome == .upgraded)
        #expect(core.apps[appA]?.app.settings.backgroundRefresh == false)
        #expect(core.apps[appA]?.app.manifest.backgroundModes == [.fetch])
        #expect(core.apps[appA]?.durable.forceQuit == true)
    }

    @Test("MAN-3: upgrading a running app ends the old version; the next open launches the new one")
    func upgradeEndsRunningVersion() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.install(manifest(appA, modes: [.fetch]))
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start) == [.callback("willTerminate"), .exited(.exited(0))])
        try sim.openAndSettle(appA)
        #expect(sim.state(of: appA) == .active)
    }

    @Test("MAN-3: uninstalling forgets the app; the shell is told to remove what it kept")
    func uninstallForgets() throws {
        var core = OffstageCore()
        let now = Instant(secondsSinceEpoch: 1)
        _ = try core.install(InstalledApp(manifest: manifest(appA), bundlePath: "/v1", installedAt: now), at: now)
        let actions = try core.uninstall(appA, at: now)
        #expect(actions.contains(.forget(appA, bundlePath: "/v1")))
        #expect(core.apps[appA] == nil)
        #expect(throws: CoreError.self) { try core.uninstall(appA, at: now) }
    }

    @Test("Bundle identifiers: reverse-DNS letters, digits, '-' and '.' only")
    func appIDValidation() {
        #expect(AppID.validated("com.example.finite-task") != nil)
        for bad in ["", ".a", "a.", "a..b", "a/b", "a b", "..", String(repeating: "a", count: 256), "é.x"] {
            #expect(AppID.validated(bad) == nil, "\(bad) should be refused")
        }
    }
}
