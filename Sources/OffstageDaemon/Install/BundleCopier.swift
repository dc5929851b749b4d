import Foundation
import OffstageCore

/// Copies a bundle folder so that the copy is self-contained: every file is a regular file of the copy's own, every
/// folder a real folder (decision 0005).
///
/// A symbolic link that stays inside the bundle is replaced by a copy of what it points to. A link that leaves the
/// bundle is refused: copying it would install whatever file it names (a system interpreter as the app's
/// executable would let every process started from that interpreter pass as the app), and keeping it would let edits
/// outside the bundle change the installed app. Links that point back to a folder containing them (loops), and
/// special files (sockets, pipes, devices), are refused too.
struct BundleCopier {
    /// The bundle folder's real path (no symbolic links in it).
    let root: String

    /// Copies the bundle to `destination`, which must not exist.
    func copy(to destination: String) throws {
        try copyFolder(root, shownAs: "", to: destination, ancestors: [root])
    }

    private func copyFolder(_ folder: String, shownAs shown: String, to destination: String, ancestors: [String]) throws {
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: destination, withIntermediateDirectories: false)
        for name in try fileManager.contentsOfDirectory(atPath: folder).sorted() {
            let path = folder + "/" + name
            let relative = shown.isEmpty ? name : shown + "/" + name
            var target = path
            if try kind(of: path) == .symlink {
                target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                guard target == root || target.hasPrefix(root + "/") else { throw refused(relative, leadsTo: target) }
            }
            switch try kind(of: target) {
            case .file:
                try copyFile(target, to: destination + "/" + name)
            case .folder:
                if ancestors.contains(target) {
                    throw ManifestError(
                        file: root + "/" + relative, key: nil, problem: "is a link to a folder that contains it (a loop)",
                        fix: "remove the link from the bundle")
                }
                try copyFolder(target, shownAs: relative, to: destination + "/" + name, ancestors: ancestors + [target])
            case .symlink:
                throw ManifestError(
                    file: root + "/" + relative, key: nil, problem: "is a symbolic link that leads nowhere",
                    fix: "remove the link or copy the file it should name into the bundle")
            case .special:
                throw ManifestError(
                    file: root + "/" + relative, key: nil, problem: "is not a regular file or folder",
                    fix: "keep only files and folders in the bundle")
            }
        }
    }

    /// Copies the contents and permission bits of a regular file, never a link.
    private func copyFile(_ source: String, to destination: String) throws {
        let fileManager = FileManager.default
        try fileManager.copyItem(atPath: source, toPath: destination)
        let attributes = try fileManager.attributesOfItem(atPath: source)
        if let permissions = attributes[.posixPermissions] as? NSNumber {
            try fileManager.setAttributes([.posixPermissions: permissions.intValue & 0o777], ofItemAtPath: destination)
        }
    }

    private func refused(_ relative: String, leadsTo target: String) -> ManifestError {
        ManifestError(
            file: root + "/" + relative, key: nil,
            problem: "is a symbolic link to \(target), outside the bundle",
            fix: "copy the file into the bundle instead of linking to it (cp -L)")
    }

    enum Kind { case file, folder, symlink, special }

    /// What `path` is, without following a link.
    private func kind(of path: String) throws -> Kind {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            throw ManifestError(
                file: path, key: nil, problem: "cannot be read (\(String(cString: strerror(errno))))",
                fix: "check that it exists and is readable")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .folder
        case S_IFLNK: return .symlink
        default: return .special
        }
    }
}
