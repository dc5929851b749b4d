import Foundation

/// Turns the bytes of an `Info.plist` (XML or binary property list) or `Info.json` into a ``Manifest``.
///
/// Pure: the caller reads the file and checks the executable on disk; this only judges the content, so the
/// same rules hold for the daemon, the simulator and tests.
public enum ManifestParser {
    /// The key under which Linux-only settings live.
    public static let linuxKey = "OffstageLinux"

    /// The format of a manifest file.
    public enum Format: Sendable {
        case propertyList
        case json
    }

    /// Parses and validates a manifest.
    /// - Parameters:
    ///   - data: the file's bytes.
    ///   - file: the file's path, used in error messages.
    ///   - format: property list or JSON (same keys).
    public static func parse(_ data: Data, file: String, format: Format) throws(ManifestError) -> Manifest {
        // Foundation's XML property list reader stops the process (a fatal error, not a thrown one) on some invalid
        // UTF-8, such as a 0xFF byte followed by a few others inside <integer>. An XML manifest is UTF-8 text anyway,
        // so anything else is refused before Foundation reads it, with a message that says so.
        if format == .propertyList, !data.starts(with: "bplist".utf8), String(validating: data, as: UTF8.self) == nil {
            throw ManifestError(
                file: file, key: nil, problem: "is neither a binary property list nor UTF-8 text",
                fix: "save the manifest as an XML property list in UTF-8, or as a binary property list")
        }
        let raw: RawManifest
        do {
            switch format {
            case .propertyList:
                raw = try PropertyListDecoder().decode(RawManifest.self, from: wellFormedPropertyList(data, file: file))
            case .json: raw = try JSONDecoder().decode(RawManifest.self, from: data)
            }
        } catch let error as ManifestError {
            throw error
        } catch let error as DecodingError {
            throw describe(error, file: file, format: format)
        } catch {
            throw ManifestError(file: file, key: nil, problem: "cannot be read (\(error))", fix: "write a valid manifest")
        }
        return try validate(raw, file: file)
    }

    /// The property list in `data` as CoreFoundation reads it, written back as a binary property list.
    ///
    /// FoundationEssentials' own property list readers, behind `PropertyListDecoder`, stop the process on some
    /// malformed input instead of throwing: for example a binary property list whose UTF-16 string runs past the end
    /// of the data (found by the manifest-plist fuzz target). CoreFoundation's reader, behind
    /// `PropertyListSerialization`, refuses such input; what it accepts it writes back well formed, and only that
    /// reaches the decoder, which keeps its precise messages for wrong types and missing keys.
    static func wellFormedPropertyList(_ data: Data, file: String) throws(ManifestError) -> Data {
        do {
            let object = try PropertyListSerialization.propertyList(from: data, format: nil)
            return try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        } catch {
            throw ManifestError(
                file: file, key: nil, problem: "is not a valid property list",
                fix: "check the file's syntax (for a property list: `plutil -lint` or an XML validator)")
        }
    }

    static func validate(_ raw: RawManifest, file: String) throws(ManifestError) -> Manifest {
        guard let id = AppID.validated(raw.CFBundleIdentifier) else {
            throw ManifestError(
                file: file, key: "CFBundleIdentifier",
                problem: "'\(raw.CFBundleIdentifier)' is not a bundle identifier",
                fix: "use reverse-DNS letters, digits, '-' and '.', for example com.example.my-app")
        }
        let executable = raw.CFBundleExecutable
        // A NUL would end the path handed to exec early, so that another file than the one named would run.
        guard !executable.isEmpty, !executable.contains("/"), !executable.utf8.contains(0), executable != ".",
            executable != ".."
        else {
            throw ManifestError(
                file: file, key: "CFBundleExecutable", problem: "'\(executable)' is not a file name",
                fix: "name the executable file that sits next to the manifest, without a path")
        }
        var modes = Set<BackgroundMode>()
        for name in raw.UIBackgroundModes ?? [] {
            guard let mode = BackgroundMode(rawValue: name) else {
                let known = BackgroundMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw ManifestError(
                    file: file, key: "UIBackgroundModes", problem: "unknown mode '\(name)'",
                    fix: "use only these modes: \(known)")
            }
            modes.insert(mode)
        }
        let identifiers = raw.BGTaskSchedulerPermittedIdentifiers ?? []
        if let bad = identifiers.first(where: { $0.isEmpty || $0.utf8.count > 255 }) {
            throw ManifestError(
                file: file, key: "BGTaskSchedulerPermittedIdentifiers", problem: "invalid identifier '\(bad)'",
                fix: "list non-empty identifiers of at most 255 bytes, such as com.example.refresh")
        }
        let linux = raw.OffstageLinux ?? RawManifest.RawLinux()
        if let limit = linux.MemoryLimitMB, limit <= 0 {
            throw ManifestError(
                file: file, key: "\(linuxKey).MemoryLimitMB", problem: "must be positive, got \(limit)",
                fix: "give the limit in MiB, for example 256, or remove the key")
        }
        // Arguments and environment go to exec as C strings: a NUL would silently cut one short, and a name with '='
        // would set another variable than the one written.
        if let bad = (linux.Arguments ?? []).first(where: { $0.utf8.contains(0) }) {
            throw ManifestError(
                file: file, key: "\(linuxKey).Arguments",
                problem: "the argument \(bad.debugDescription) contains a NUL",
                fix: "remove the NUL character; a program argument cannot hold one")
        }
        for (name, value) in (linux.Environment ?? [:]).sorted(by: { $0.key < $1.key }) {
            if name.isEmpty || name.contains("=") || name.utf8.contains(0) {
                throw ManifestError(
                    file: file, key: "\(linuxKey).Environment",
                    problem: "\(name.debugDescription) is not a variable name",
                    fix: "name each variable without '=' or NUL, for example LANG")
            }
            if value.utf8.contains(0) {
                throw ManifestError(
                    file: file, key: "\(linuxKey).Environment.\(name)", problem: "the value contains a NUL",
                    fix: "remove the NUL character; an environment variable cannot hold one")
            }
        }
        return Manifest(
            id: id, executable: executable, backgroundModes: modes, permittedTaskIdentifiers: identifiers,
            exitsOnSuspend: raw.UIApplicationExitsOnSuspend ?? false,
            linux: .init(
                arguments: linux.Arguments ?? [], environment: linux.Environment ?? [:],
                memoryLimitMB: linux.MemoryLimitMB))
    }

    static func describe(_ error: DecodingError, file: String, format: Format) -> ManifestError {
        func keyPath(_ path: [any CodingKey]) -> String? {
            path.isEmpty ? nil : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let full = keyPath(context.codingPath + [key]) ?? key.stringValue
            return ManifestError(
                file: file, key: full, problem: "is missing", fix: "add the '\(full)' key to the manifest")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return ManifestError(
                file: file, key: keyPath(context.codingPath), problem: "has the wrong type",
                fix: "make it \(typeName(type, format: format))")
        case .dataCorrupted(let context):
            let what = format == .json ? "JSON" : "property list"
            return ManifestError(
                file: file, key: keyPath(context.codingPath), problem: "is not a valid \(what)",
                fix: "check the file's syntax (for a property list: `plutil -lint` or an XML validator)")
        @unknown default:
            return ManifestError(file: file, key: nil, problem: "cannot be read", fix: "write a valid manifest")
        }
    }

    static func typeName(_ type: Any.Type, format: Format) -> String {
        let plist = format == .propertyList
        switch type {
        case is Bool.Type: return plist ? "a boolean (<true/> or <false/>)" : "a boolean (true or false)"
        case is String.Type: return plist ? "a string (<string>…</string>)" : "a string"
        case is Int.Type: return plist ? "an integer (<integer>…</integer>)" : "an integer"
        case is [String].Type: return plist ? "an array of strings (<array><string>…</string></array>)" : "an array of strings"
        case is [String: String].Type: return plist ? "a dictionary of strings (<dict>…</dict>)" : "an object of strings"
        default: return plist ? "a dictionary (<dict>…</dict>)" : "an object"
        }
    }
}

/// The manifest exactly as written; validated into ``Manifest``.
struct RawManifest: Decodable {
    var CFBundleIdentifier: String
    var CFBundleExecutable: String
    var UIBackgroundModes: [String]?
    var BGTaskSchedulerPermittedIdentifiers: [String]?
    var UIApplicationExitsOnSuspend: Bool?
    var OffstageLinux: RawLinux?

    struct RawLinux: Decodable {
        var Arguments: [String]?
        var Environment: [String: String]?
        var MemoryLimitMB: Int?
    }
}
