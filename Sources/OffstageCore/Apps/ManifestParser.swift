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
        let raw: RawManifest
        do {
            switch format {
            case .propertyList: raw = try PropertyListDecoder().decode(RawManifest.self, from: data)
            case .json: raw = try JSONDecoder().decode(RawManifest.self, from: data)
            }
        } catch let error as DecodingError {
            throw describe(error, file: file, format: format)
        } catch {
            throw ManifestError(file: file, key: nil, problem: "cannot be read (\(error))", fix: "write a valid manifest")
        }
        return try validate(raw, file: file)
    }

    static func validate(_ raw: RawManifest, file: String) throws(ManifestError) -> Manifest {
        guard let id = AppID.validated(raw.CFBundleIdentifier) else {
            throw ManifestError(
                file: file, key: "CFBundleIdentifier",
                problem: "\(QuotedText.quote(raw.CFBundleIdentifier)) is not a bundle identifier",
                fix: "use reverse-DNS letters, digits, '-' and '.', for example com.example.my-app")
        }
        let executable = raw.CFBundleExecutable
        guard !executable.isEmpty, !executable.contains("/"), executable != ".", executable != ".." else {
            throw ManifestError(
                file: file, key: "CFBundleExecutable", problem: "\(QuotedText.quote(executable)) is not a file name",
                fix: "name the executable file that sits next to the manifest, without a path")
        }
        var modes = Set<BackgroundMode>()
        for name in raw.UIBackgroundModes ?? [] {
            guard let mode = BackgroundMode(rawValue: name) else {
                let known = BackgroundMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw ManifestError(
                    file: file, key: "UIBackgroundModes", problem: "unknown mode \(QuotedText.quote(name))",
                    fix: "use only these modes: \(known)")
            }
            modes.insert(mode)
        }
        let identifiers = raw.BGTaskSchedulerPermittedIdentifiers ?? []
        if let bad = identifiers.first(where: { $0.isEmpty || $0.utf8.count > 255 }) {
            throw ManifestError(
                file: file, key: "BGTaskSchedulerPermittedIdentifiers", problem: "invalid identifier \(QuotedText.quote(bad))",
                fix: "list non-empty identifiers of at most 255 bytes, such as com.example.refresh")
        }
        let linux = raw.OffstageLinux ?? RawManifest.RawLinux()
        if let limit = linux.MemoryLimitMB, limit <= 0 {
            throw ManifestError(
                file: file, key: "\(linuxKey).MemoryLimitMB", problem: "must be positive, got \(limit)",
                fix: "give the limit in MiB, for example 256, or remove the key")
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
        case .typeMismatch(_, let context) where context.codingPath.isEmpty:
            let what = format == .json ? "a JSON object" : "a property list dictionary (<dict>…</dict>)"
            return ManifestError(
                file: file, key: nil, problem: "is not a manifest: its top level is not \(what)",
                fix: "write the manifest keys (CFBundleIdentifier, CFBundleExecutable …) in \(what)")
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
        // Decoders report a container they expected by its generic shape; every array of a manifest holds strings.
        case is [Any].Type: return plist ? "an array of strings (<array><string>…</string></array>)" : "an array of strings"
        case is [String: Any].Type: return plist ? "a dictionary (<dict>…</dict>)" : "an object"
        default: return plist ? "a value of type \(type)" : "a value of type \(type)"
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
