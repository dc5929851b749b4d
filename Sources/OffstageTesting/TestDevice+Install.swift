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
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TestKitError.invalidArgument("\(url.path): cannot be read (\(error.localizedDescription))")
        }
        return try install(manifestData: data, file: url.path, format: .propertyList, delegate: delegate)
    }

    /// Installs an app declared here rather than in a file: its bundle identifier, `UIBackgroundModes` and
    /// `BGTaskSchedulerPermittedIdentifiers`, checked as an `Info.plist` with those keys would be.
    @discardableResult
    public func install(
        bundleIdentifier: String, backgroundModes: [String] = [], taskIdentifiers: [String] = [],
        delegate: @escaping @MainActor () -> any ApplicationDelegate
    ) throws -> TestApp {
        let plist: [String: Any] = [
            "CFBundleIdentifier": bundleIdentifier, "CFBundleExecutable": "App",
            "UIBackgroundModes": backgroundModes, "BGTaskSchedulerPermittedIdentifiers": taskIdentifiers,
        ]
        let data = try JSONSerialization.data(withJSONObject: plist)
        return try install(manifestData: data, file: "the manifest of \(bundleIdentifier)", format: .json, delegate: delegate)
    }

    private func install(
        manifestData: Data, file: String, format: ManifestParser.Format,
        delegate: @escaping @MainActor () -> any ApplicationDelegate
    ) throws -> TestApp {
        let manifest: Manifest
        do {
            manifest = try ManifestParser.parse(manifestData, file: file, format: format)
        } catch {
            throw TestKitError.refused(message: "\(error)", fix: "correct the manifest as the message says")
        }
        return try install(manifest, delegate: delegate)
    }
}
