import Foundation
import OffstageCore

/// The properties every input of the manifest fuzz targets must keep (SPEC MAN-2 and §11: a bad manifest is refused
/// with a message that names the file, the key and the fix; malformed input gets a clear error and changes nothing).
///
/// One file, compiled twice: SwiftPM builds it into this test target, where `ManifestFuzzRegressionTests` replays
/// every committed fuzz input through it, and `scripts/fuzz` compiles it with `swiftc -sanitize=fuzzer` next to the
/// entry points in `Fuzz/Targets/`. It lives in the test target's folder because that is the one place both builds
/// can read without a symlink or a change to Package.swift. So it imports only Foundation and the module under test,
/// never `Testing`: a broken property is thrown as a `Violation`, and each side decides what that means.
enum ManifestFuzzChecks {
    /// A property that did not hold, in words.
    struct Violation: Error, CustomStringConvertible {
        var description: String

        init(_ description: String) { self.description = description }
    }

    /// The file name given to the parser, which every refusal must name.
    static let file = "Fuzz.app/Info.plist"

    /// `ManifestParser.parse` on any bytes either refuses them with a `ManifestError` that names the file and says
    /// what is wrong and how to fix it, or returns a manifest that keeps every rule of MAN-1 and MAN-2, that the
    /// daemon can hand to `exec` as written, and that reads back the same from a binary property list and from JSON
    /// (so nothing depends on the format it came in).
    static func check(_ bytes: [UInt8], format: ManifestParser.Format) throws(Violation) {
        let manifest: Manifest
        do {
            manifest = try ManifestParser.parse(Data(bytes), file: file, format: format)
        } catch {
            try checkRefusal(error)
            return
        }
        try checkRules(manifest)
        for (name, data) in [
            ("binary property list", encodedBinaryPropertyList(manifest)), ("JSON", encodedJSON(manifest)),
        ] {
            guard let data else { throw Violation("the accepted manifest \(manifest) does not encode as \(name)") }
            let again: Manifest
            do {
                again = try ManifestParser.parse(data, file: file, format: name == "JSON" ? .json : .propertyList)
            } catch {
                throw Violation("the accepted manifest, written as \(name), is refused: \(error)")
            }
            guard again == manifest else { throw Violation("written as \(name) it reads \(again), not \(manifest)") }
        }
    }

    /// A refusal names the file given, the key when there is one, what is wrong and a fix (MAN-2).
    private static func checkRefusal(_ error: ManifestError) throws(Violation) {
        guard error.file == file else { throw Violation("the refusal names the file '\(error.file)', not '\(file)'") }
        guard error.key.map({ !$0.isEmpty }) ?? true, !error.problem.isEmpty, !error.fix.isEmpty else {
            throw Violation("the refusal lacks a key, a problem or a fix: \(error)")
        }
        let text = error.description
        guard text.hasPrefix(file), text.contains(error.fix), text.contains(error.problem) else {
            throw Violation("the refusal's message does not say the file, the problem and the fix: \(text)")
        }
    }

    /// What an accepted manifest promises: a valid bundle identifier; an executable that is a plain file name;
    /// non-empty task identifiers of at most 255 bytes; a positive memory limit if any; and, so that the daemon can
    /// start the app exactly as declared, no NUL in anything passed to `exec` (a C string would end there) and
    /// environment names that are non-empty and hold no `=` (else `NAME=VALUE` would read as another variable).
    private static func checkRules(_ manifest: Manifest) throws(Violation) {
        guard AppID.validated(manifest.id.rawValue) == manifest.id else {
            throw Violation("accepted the invalid bundle identifier '\(manifest.id)'")
        }
        let executable = manifest.executable
        guard !executable.isEmpty, !executable.contains("/"), executable != ".", executable != ".." else {
            throw Violation("accepted the executable '\(executable)', which is not a file name")
        }
        if let bad = manifest.permittedTaskIdentifiers.first(where: { $0.isEmpty || $0.utf8.count > 255 }) {
            throw Violation("accepted the task identifier '\(bad)'")
        }
        if let limit = manifest.linux.memoryLimitMB, limit <= 0 {
            throw Violation("accepted the memory limit \(limit)")
        }
        let execStrings =
            [executable] + manifest.linux.arguments + manifest.linux.environment.flatMap { [$0.key, $0.value] }
        if let bad = execStrings.first(where: { $0.utf8.contains(0) }) {
            throw Violation("accepted \(bad.debugDescription), which holds a NUL and cannot be passed to exec")
        }
        if let bad = manifest.linux.environment.keys.first(where: { $0.isEmpty || $0.contains("=") }) {
            throw Violation("accepted the environment variable name \(bad.debugDescription)")
        }
    }

    /// The manifest written back with the keys of MAN-1, in the form an app's author would write.
    private struct Written: Encodable {
        var identifier: String
        var executable: String
        var modes: [String]
        var taskIdentifiers: [String]
        var exitsOnSuspend: Bool
        var linux: Linux

        struct Linux: Encodable {
            var arguments: [String]
            var environment: [String: String]
            var memoryLimitMB: Int?

            enum CodingKeys: String, CodingKey {
                case arguments = "Arguments"
                case environment = "Environment"
                case memoryLimitMB = "MemoryLimitMB"
            }
        }

        enum CodingKeys: String, CodingKey {
            case identifier = "CFBundleIdentifier"
            case executable = "CFBundleExecutable"
            case modes = "UIBackgroundModes"
            case taskIdentifiers = "BGTaskSchedulerPermittedIdentifiers"
            case exitsOnSuspend = "UIApplicationExitsOnSuspend"
            case linux = "OffstageLinux"
        }

        init(_ manifest: Manifest) {
            identifier = manifest.id.rawValue
            executable = manifest.executable
            modes = manifest.backgroundModes.map(\.rawValue).sorted()
            taskIdentifiers = manifest.permittedTaskIdentifiers
            exitsOnSuspend = manifest.exitsOnSuspend
            linux = Linux(
                arguments: manifest.linux.arguments, environment: manifest.linux.environment,
                memoryLimitMB: manifest.linux.memoryLimitMB)
        }
    }

    private static func encodedBinaryPropertyList(_ manifest: Manifest) -> Data? {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try? encoder.encode(Written(manifest))
    }

    private static func encodedJSON(_ manifest: Manifest) -> Data? {
        try? JSONEncoder().encode(Written(manifest))
    }
}
