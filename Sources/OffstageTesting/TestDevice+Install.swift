import Foundation
import Offstage
import OffstageCore

extension TestDevice {
    /// Installs the app described by its `Info.plist` — the same file its bundle ships, read with the same rules
    /// as `offstage install` — whose processes run `delegate()` as their application delegate. Installing the same
    /// app again upgrades it, as a new version would.
    ///
    /// - Throws: ``TestKitError/refused(message:fix:)`` naming the key of the manifest that is wrong, or
    ///   ``TestKitError/invalidArgument(_:)`` when the file cannot be read or another app's code already runs here.
    @discardableResult
    public func install(
        infoPlist url: URL, delegate: @escaping @MainActor () -> any ApplicationDelegate
    ) throws -> TestApp {
        try install(infoPlist: url) { (_: [String: String]) in delegate() }
    }

    /// Installs the app described by its `Info.plist`, as the `install(infoPlist:delegate:)` above does, for an app that
    /// reads its environment: `delegate` gets the variables the daemon gives each process — the
    /// manifest's `OffstageLinux.Environment`, `OFFSTAGE_DATA_DIR` (``TestApp/dataDirectory``), `OFFSTAGE_APP_ID`,
    /// `OFFSTAGE_LAUNCH_REASON` and `OFFSTAGE_BUNDLE_DIR` — where the app reads `ProcessInfo`'s on a device.
    ///
    /// ```swift
    /// let app = try device.install(infoPlist: plist) { environment in DownloaderDelegate(environment: environment) }
    /// ```
    @discardableResult
    public func install(
        infoPlist url: URL, delegate: @escaping @MainActor (_ environment: [String: String]) -> any ApplicationDelegate
    ) throws -> TestApp {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TestKitError.invalidArgument("\(url.path): cannot be read (\(error.localizedDescription))")
        }
        return try install(
            manifestData: data, file: url.path, format: .propertyList, bundle: url.deletingLastPathComponent(), delegate: delegate)
    }

    /// Installs the app described by its `Info.plist` with some top-level keys replaced: a variant of the app, as a
    /// platform maker might ship it (`UIApplicationExitsOnSuspend`, other `UIBackgroundModes`, `OffstageLinux`
    /// arguments). The folder of the file is still the bundle.
    ///
    /// - Throws: what `install(infoPlist:delegate:)` throws, and
    ///   ``TestKitError/invalidArgument(_:)`` when the file is not a property list with a dictionary at its top.
    @discardableResult
    public func install(
        infoPlist url: URL, replacing keys: [String: Any],
        delegate: @escaping @MainActor (_ environment: [String: String]) -> any ApplicationDelegate
    ) throws -> TestApp {
        let data: Data
        do {
            let read = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil)
            guard var plist = read as? [String: Any] else {
                throw TestKitError.invalidArgument("\(url.path): not a dictionary at its top")
            }
            plist.merge(keys) { _, replacement in replacement }
            data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        } catch let error as TestKitError {
            throw error
        } catch {
            throw TestKitError.invalidArgument("\(url.path): cannot be read as a property list (\(error.localizedDescription))")
        }
        return try install(
            manifestData: data, file: url.path, format: .propertyList, bundle: url.deletingLastPathComponent(), delegate: delegate)
    }

    /// Installs an app declared here rather than in a file: its bundle identifier, `UIBackgroundModes` and
    /// `BGTaskSchedulerPermittedIdentifiers`, checked as an `Info.plist` with those keys would be.
    @discardableResult
    public func install(
        bundleIdentifier: String, backgroundModes: [String] = [], taskIdentifiers: [String] = [],
        delegate: @escaping @MainActor () -> any ApplicationDelegate
    ) throws -> TestApp {
        try install(
            bundleIdentifier: bundleIdentifier, backgroundModes: backgroundModes, taskIdentifiers: taskIdentifiers,
            delegate: { (_: [String: String]) in delegate() })
    }

    /// Installs an app declared here, as the `install(bundleIdentifier:…)` above does, for an app that reads its
    /// environment: `delegate` gets the variables the daemon gives each process (`OFFSTAGE_DATA_DIR` …).
    @discardableResult
    public func install(
        bundleIdentifier: String, backgroundModes: [String] = [], taskIdentifiers: [String] = [],
        delegate: @escaping @MainActor (_ environment: [String: String]) -> any ApplicationDelegate
    ) throws -> TestApp {
        let plist: [String: Any] = [
            "CFBundleIdentifier": bundleIdentifier, "CFBundleExecutable": "App",
            "UIBackgroundModes": backgroundModes, "BGTaskSchedulerPermittedIdentifiers": taskIdentifiers,
        ]
        let data = try JSONSerialization.data(withJSONObject: plist)
        return try install(
            manifestData: data, file: "the manifest of \(bundleIdentifier)", format: .json, bundle: nil, delegate: delegate)
    }

    private func install(
        manifestData: Data, file: String, format: ManifestParser.Format, bundle: URL?,
        delegate: @escaping @MainActor (_ environment: [String: String]) -> any ApplicationDelegate
    ) throws -> TestApp {
        let manifest: Manifest
        do {
            manifest = try ManifestParser.parse(manifestData, file: file, format: format)
        } catch {
            throw TestKitError.refused(message: "\(error)", fix: "correct the manifest as the message says")
        }
        return try install(manifest, bundle: bundle, delegate: delegate)
    }
}

extension TestDevice {
    /// The user uninstalls `app` (SPEC MAN-3): a running process hears will-terminate and ends (a suspended one ends
    /// silently), and the system forgets everything the app had — its scheduled work, its notifications, its device
    /// token and Web Push subscription (its servers now get 410) — and removes its data folder. Installing it again starts
    /// afresh.
    ///
    /// - Throws: ``TestKitError/refused(message:fix:)`` when the app is not installed.
    public func uninstall(_ app: TestApp) async throws {
        try await user { simulation throws(CoreError) in try simulation.uninstall(app.appID) }
        host.with { state in
            KitHost.revokeToken(of: app.appID, &state)
            KitHost.endSubscription(of: app.appID, &state)
        }
        try? FileManager.default.removeItem(at: app.dataDirectory)
    }
}

extension TestApp {
    /// The app's data folder: where the SDK puts the app's files (`DurableStore.standard`), as `OFFSTAGE_DATA_DIR`
    /// names it on a device. They stay across launches and go with an uninstall. Give it to an app that reads the
    /// variable itself.
    public var dataDirectory: URL { device.folder.appendingPathComponent(id, isDirectory: true) }
}
