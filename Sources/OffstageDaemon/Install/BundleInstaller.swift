import Foundation
import OffstageCore

/// Reads an app bundle folder from disk, checks it, and copies it into the daemon's own storage so the user's
/// folder can change or go away (SPEC MAN-1..3). A bundle that fails any check leaves nothing behind.
public struct BundleInstaller: Sendable {
    /// Where installed bundles live: one folder per app id.
    public let bundlesDirectory: String

    /// Creates an installer storing bundles under `bundlesDirectory`.
    public init(bundlesDirectory: String) {
        self.bundlesDirectory = bundlesDirectory
    }

    /// The manifest file names looked for, in order.
    public static let manifestNames = ["Info.plist", "Info.json"]

    /// Reads and validates the bundle at `path`.
    public func inspect(bundleAt path: String) throws(ManifestError) -> Manifest {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard path.hasPrefix("/") else {
            throw ManifestError(file: path, key: nil, problem: "is not an absolute path", fix: "give the bundle folder's absolute path")
        }
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ManifestError(
                file: path, key: nil, problem: "is not a bundle folder",
                fix: "give a folder holding Info.plist (or Info.json) and the app's executable")
        }
        guard let name = Self.manifestNames.first(where: { fileManager.fileExists(atPath: path + "/" + $0) }) else {
            throw ManifestError(
                file: path + "/Info.plist", key: nil, problem: "does not exist (nor Info.json)",
                fix: "add an Info.plist with CFBundleIdentifier and CFBundleExecutable to the bundle folder")
        }
        let file = path + "/" + name
        guard let data = fileManager.contents(atPath: file) else {
            throw ManifestError(file: file, key: nil, problem: "cannot be read", fix: "check the file's permissions")
        }
        let manifest = try ManifestParser.parse(data, file: file, format: name.hasSuffix(".json") ? .json : .propertyList)
        let executable = path + "/" + manifest.executable
        var executableIsDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: executable, isDirectory: &executableIsDirectory) else {
            throw ManifestError(
                file: file, key: "CFBundleExecutable",
                problem: "names '\(manifest.executable)', but \(executable) does not exist",
                fix: "put the executable in the bundle folder or correct the name")
        }
        guard !executableIsDirectory.boolValue, fileManager.isExecutableFile(atPath: executable) else {
            throw ManifestError(
                file: file, key: "CFBundleExecutable", problem: "\(executable) is not an executable file",
                fix: "make it executable: chmod +x \(executable)")
        }
        return manifest
    }

    /// Copies the bundle into storage under the app's id, replacing a previous version atomically.
    /// - Returns: the installed bundle's path.
    public func store(bundleAt path: String, manifest: Manifest) throws -> String {
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: bundlesDirectory, withIntermediateDirectories: true)
        let final = bundlesDirectory + "/" + manifest.id.rawValue
        let staging = bundlesDirectory + "/.staging-\(manifest.id.rawValue)-\(getpid())"
        let retired = bundlesDirectory + "/.retired-\(manifest.id.rawValue)-\(getpid())"
        try? fileManager.removeItem(atPath: staging)
        try? fileManager.removeItem(atPath: retired)
        do {
            try fileManager.copyItem(atPath: path, toPath: staging)
            // A symlinked executable would still point into the user's folder: copy what it points to.
            let executable = staging + "/" + manifest.executable
            if (try? fileManager.destinationOfSymbolicLink(atPath: executable)) != nil {
                let resolved = URL(fileURLWithPath: path + "/" + manifest.executable).resolvingSymlinksInPath().path
                try fileManager.removeItem(atPath: executable)
                try fileManager.copyItem(atPath: resolved, toPath: executable)
            }
            try fileManager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: executable)
            if fileManager.fileExists(atPath: final) { try fileManager.moveItem(atPath: final, toPath: retired) }
            try fileManager.moveItem(atPath: staging, toPath: final)
            try? fileManager.removeItem(atPath: retired)
        } catch {
            try? fileManager.removeItem(atPath: staging)
            if !fileManager.fileExists(atPath: final), fileManager.fileExists(atPath: retired) {
                try? fileManager.moveItem(atPath: retired, toPath: final)
            }
            throw error
        }
        return final
    }

    /// Removes an app's stored bundle.
    public func remove(_ id: AppID) {
        try? FileManager.default.removeItem(atPath: bundlesDirectory + "/" + id.rawValue)
    }
}
