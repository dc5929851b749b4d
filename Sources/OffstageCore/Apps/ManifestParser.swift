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
        // Foundation's property list readers stop the process (a trap, not a thrown error) on some malformed input,
        // so what they cannot be trusted with is refused first, with a message that says what is wrong. Found by
        // the manifest-plist fuzz target: invalid UTF-8 in XML (a 0xFF byte and a few others inside <integer>), and
        // binary property lists whose objects run past the end of the data.
        if format == .propertyList {
            if data.starts(with: "bplist".utf8) {
                if let problem = BinaryPropertyListStructure.problem(in: data) {
                    throw ManifestError(
                        file: file, key: nil, problem: "is not a valid binary property list (\(problem))",
                        fix: "write it again with a property list tool, for example `plutil -convert binary1`")
                }
            } else if String(validating: data, as: UTF8.self) == nil {
                throw ManifestError(
                    file: file, key: nil, problem: "is neither a binary property list nor UTF-8 text",
                    fix: "save the manifest as an XML property list in UTF-8, or as a binary property list")
            }
        }
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
        // A NUL would end the path handed to exec early, so that another file than the one named would run.
        guard !executable.isEmpty, !executable.contains("/"), !executable.utf8.contains(0), executable != ".",
            executable != ".."
        else {
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
        if let limit = linux.MemoryLimitMB, limit <= 0 || limit > Manifest.LinuxSettings.maximumMemoryLimitMB {
            throw ManifestError(
                file: file, key: "\(linuxKey).MemoryLimitMB",
                problem: "must be from 1 to \(Manifest.LinuxSettings.maximumMemoryLimitMB) (1 TiB), got \(limit)",
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

/// The structure of a binary property list (`bplist00`), checked before Foundation's reader sees it.
///
/// FoundationEssentials' binary reader trusts the lengths and offsets in the data and traps when they point past
/// its end (a UTF-16 string claiming more characters than follow, found by fuzzing); CoreFoundation's reader, the
/// other one at hand, crashes on other inputs in its bridging to Swift. So every object is checked here: its offset
/// and extent lie inside the object area, its references name existing objects, no object contains itself, nesting
/// stays under 512 levels, dictionary keys are strings, and only the kinds a property list file holds appear (no
/// sets or UIDs, which a manifest never has).
enum BinaryPropertyListStructure {
    /// What is wrong with `data`, or nil when its structure is sound.
    static func problem(in data: Data) -> String? {
        let bytes = [UInt8](data)
        guard bytes.count >= 8 + 1 + 32, bytes.starts(with: "bplist00".utf8) else {
            return "no bplist00 header, or too short"
        }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
            let count = integer(bytes, at: trailer + 8, size: 8), let top = integer(bytes, at: trailer + 16, size: 8),
            let table = integer(bytes, at: trailer + 24, size: 8)
        else { return "bad trailer" }
        // Every object takes at least a byte between the header and the offset table.
        guard table > 8, table <= trailer, count >= 1, count <= table - 8, top < count,
            table + count * offsetSize <= trailer
        else { return "bad trailer" }
        var children: [[Int]] = []
        var kinds: [UInt8] = []
        var keys: [Int] = []
        children.reserveCapacity(count)
        kinds.reserveCapacity(count)
        for index in 0..<count {
            guard let offset = integer(bytes, at: table + index * offsetSize, size: offsetSize), offset >= 8,
                offset < table
            else { return "object \(index) has a bad offset" }
            guard let references = object(bytes, at: offset, end: table, referenceSize: referenceSize, count: count)
            else { return "object \(index) is malformed or of a kind a manifest never holds" }
            let kind = bytes[offset] >> 4
            // A dictionary's references are its keys, then its values.
            if kind == 0xD { keys += references.prefix(references.count / 2) }
            children.append(references)
            kinds.append(kind)
        }
        if keys.contains(where: { kinds[$0] != 0x5 && kinds[$0] != 0x6 }) { return "a dictionary key is not a string" }
        return cycleOrDepthProblem(children, from: top)
    }

    /// The references held by the object at `offset` (empty for a scalar), or nil when its extent passes `end`, a
    /// reference names no object, a dictionary key is not a string, or its kind is not one a file holds.
    private static func object(_ bytes: [UInt8], at offset: Int, end: Int, referenceSize: Int, count: Int) -> [Int]? {
        let marker = bytes[offset]
        let kind = marker >> 4
        let info = Int(marker & 0x0F)
        switch kind {
        case 0x0: return [0x00, 0x08, 0x09].contains(marker) ? [] : nil  // null, false, true
        case 0x1: return info <= 4 && offset + 1 + (1 << info) <= end ? [] : nil  // integer of 2^info bytes
        case 0x2: return (info == 2 || info == 3) && offset + 1 + (1 << info) <= end ? [] : nil  // real
        case 0x3: return marker == 0x33 && offset + 9 <= end ? [] : nil  // date
        case 0x4, 0x5, 0x6, 0xA, 0xD: break
        default: return nil  // UID, set, and kinds no format version defines
        }
        // A length of 15 means the length follows as an integer object.
        var start = offset + 1
        var length = info
        if info == 0x0F {
            guard start < end, bytes[start] >> 4 == 0x1, bytes[start] & 0x0F <= 3 else { return nil }
            let size = 1 << Int(bytes[start] & 0x0F)
            guard start + 1 + size <= end, let value = integer(bytes, at: start + 1, size: size) else { return nil }
            length = value
            start += 1 + size
        }
        // Bounded before multiplying, so that no length can overflow.
        guard length <= end else { return nil }
        switch kind {
        case 0x4, 0x5: return start + length <= end ? [] : nil  // data, ASCII string
        case 0x6: return start + 2 * length <= end ? [] : nil  // UTF-16 string
        default:
            let referenceCount = kind == 0xD ? 2 * length : length
            guard start + referenceCount * referenceSize <= end else { return nil }
            var references: [Int] = []
            references.reserveCapacity(referenceCount)
            for index in 0..<referenceCount {
                guard let reference = integer(bytes, at: start + index * referenceSize, size: referenceSize),
                    reference < count
                else { return nil }
                references.append(reference)
            }
            return references
        }
    }

    /// A problem when an object contains itself or objects nest deeper than 512 levels, found by one depth-first
    /// walk that visits each object once.
    private static func cycleOrDepthProblem(_ children: [[Int]], from top: Int) -> String? {
        enum Mark { case unseen, open, done }
        var marks = [Mark](repeating: .unseen, count: children.count)
        var stack: [(object: Int, next: Int)] = [(top, 0)]
        marks[top] = .open
        while let (object, next) = stack.last {
            if next == children[object].count {
                marks[object] = .done
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].next += 1
            let child = children[object][next]
            switch marks[child] {
            case .open: return "an object contains itself"
            case .done: continue
            case .unseen:
                guard stack.count < 512 else { return "nested deeper than 512 levels" }
                marks[child] = .open
                stack.append((child, 0))
            }
        }
        return nil
    }

    /// The big-endian unsigned integer of `size` bytes at `offset`, if it fits in an `Int` and the bytes are there.
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> Int? {
        guard offset >= 0, size <= 8, offset + size <= bytes.count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<(offset + size)] { value = value << 8 | UInt64(byte) }
        return Int(exactly: value)
    }
}
