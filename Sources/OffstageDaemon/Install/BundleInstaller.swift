import Foundation
import OffstageCore

/// Reads an app bundle folder from disk, copies it into the daemon's own storage and checks the copy, so the user's
/// folder can change or go away and what runs is exactly what was checked (SPEC MAN-1..3, decision 0005).
///
/// Every install gets a folder of its own (`<id>@<token>`), written under a hidden staging name and renamed into
/// place, so an upgrade never overwrites the folder a running version executes from, and an uninstall that finishes
/// late removes only its own version's folder. Anything in the bundles folder that no installed app refers to —
/// staging copies and folders of versions replaced or uninstalled when the daemon crashed — is swept at start-up.
public struct BundleInstaller: Sendable {
    /// Where installed bundles live: one folder per installed version.
    public let bundlesDirectory: String

    /// Creates an installer storing bundles under `bundlesDirectory`.
    public init(bundlesDirectory: String) {
        self.bundlesDirectory = bundlesDirectory
    }

    /// The manifest file names looked for, in order.
    public static let manifestNames = ["Info.plist", "Info.json"]
    /// The prefix of copies still being made.
    static let stagingPrefix = ".staging-"

    /// A bundle copied into storage and checked.
    public struct StoredBundle: Sendable {
        /// The validated manifest (read from the copy).
        public var manifest: Manifest
        /// The installed bundle's folder.
        public var path: String
        /// The executable in the user's folder, so a copy started by hand from there is recognised (SPEC LC-8).
        public var sourceExecutable: String
    }

    /// Copies the bundle at `path` into storage and validates the copy. On any error nothing is left behind.
    public func install(bundleAt path: String) throws -> StoredBundle {
        let source = try checkedSource(path)
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: bundlesDirectory, withIntermediateDirectories: true)
        let token = Self.token()
        let staging = bundlesDirectory + "/" + Self.stagingPrefix + token
        do {
            try BundleCopier(root: source).copy(to: staging)
            let manifest = try inspect(copyAt: staging, reportingAs: path)
            let final = bundlesDirectory + "/" + manifest.id.rawValue + "@" + token
            try fileManager.moveItem(atPath: staging, toPath: final)
            let executable = URL(fileURLWithPath: source + "/" + manifest.executable).resolvingSymlinksInPath().path
            return StoredBundle(manifest: manifest, path: final, sourceExecutable: executable)
        } catch {
            try? fileManager.removeItem(atPath: staging)
            throw error
        }
    }

    /// The bundle folder's real path, or a ``ManifestError`` saying why it is not one.
    func checkedSource(_ path: String) throws(ManifestError) -> String {
        guard path.hasPrefix("/") else {
            throw ManifestError(file: path, key: nil, problem: "is not an absolute path", fix: "give the bundle folder's absolute path")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ManifestError(
                file: path, key: nil, problem: "is not a bundle folder",
                fix: "give a folder holding Info.plist (or Info.json) and the app's executable")
        }
        return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    /// Validates the manifest and executable of the copy at `copy`; errors name the files as under `original`.
    func inspect(copyAt copy: String, reportingAs original: String) throws(ManifestError) -> Manifest {
        let fileManager = FileManager.default
        guard let name = Self.manifestNames.first(where: { fileManager.fileExists(atPath: copy + "/" + $0) }) else {
            throw ManifestError(
                file: original + "/Info.plist", key: nil, problem: "does not exist (nor Info.json)",
                fix: "add an Info.plist with CFBundleIdentifier and CFBundleExecutable to the bundle folder")
        }
        let file = original + "/" + name
        guard let data = fileManager.contents(atPath: copy + "/" + name) else {
            throw ManifestError(file: file, key: nil, problem: "cannot be read", fix: "check the file's permissions")
        }
        let manifest = try ManifestParser.parse(data, file: file, format: name.hasSuffix(".json") ? .json : .propertyList)
        let shown = original + "/" + manifest.executable
        let executable = copy + "/" + manifest.executable
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: executable, isDirectory: &isDirectory) else {
            throw ManifestError(
                file: file, key: "CFBundleExecutable", problem: "names '\(manifest.executable)', but \(shown) does not exist",
                fix: "put the executable in the bundle folder or correct the name")
        }
        guard !isDirectory.boolValue, fileManager.isExecutableFile(atPath: executable) else {
            throw ManifestError(
                file: file, key: "CFBundleExecutable", problem: "\(shown) is not an executable file",
                fix: "make it executable: chmod +x \(shown)")
        }
        return manifest
    }

    /// Removes one installed version's folder (never another version's).
    public func remove(bundleAt path: String) {
        guard path.hasPrefix(bundlesDirectory + "/") else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Removes every entry of the bundles folder that is not one of `keep`: staging copies and versions whose
    /// replacement or uninstall was cut short by a crash. Returns the names removed.
    @discardableResult
    public func sweep(keeping keep: Set<String>) -> [String] {
        let fileManager = FileManager.default
        let kept = Set(keep.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        guard let names = try? fileManager.contentsOfDirectory(atPath: bundlesDirectory) else { return [] }
        var removed: [String] = []
        for name in names.sorted() {
            let path = URL(fileURLWithPath: bundlesDirectory + "/" + name).standardizedFileURL.path
            guard !kept.contains(path) else { continue }
            if (try? fileManager.removeItem(atPath: path)) != nil { removed.append(name) }
        }
        return removed
    }

    /// A name part no other install of this machine will use.
    static func token() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 16)
    }
}
