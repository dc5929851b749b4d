import ArgumentParser
import Foundation
import OffstageCore

/// `offstage bundle`: lays out an app bundle from a built executable and its manifest, ready for `offstage install`.
/// It needs no daemon: it checks the manifest with the same rules the daemon applies.
struct MakeBundle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Make an app bundle folder from a built executable and its Info.plist (or Info.json).",
        discussion: """
            Copies the executable (the file itself, never a link) under the name the manifest's CFBundleExecutable \
            gives, and the manifest beside it, into BUNDLE_DIR (default: <CFBundleExecutable>.bundle here). An \
            existing bundle folder is updated in place, keeping its other files. Example, in a SwiftPM package: \
            `swift build && offstage bundle .build/debug/Weather Info.plist && offstage install Weather.bundle`.
            """)

    @Argument(help: ArgumentHelp("The built executable.", valueName: "EXECUTABLE")) var executable: String
    @Argument(help: ArgumentHelp("The manifest: Info.plist or Info.json.", valueName: "MANIFEST")) var manifestPath: String
    @Option(name: .customLong("output"), help: ArgumentHelp("The bundle folder to make.", valueName: "BUNDLE_DIR"))
    var output: String?
    @Flag(name: .long, help: "Print machine-readable JSON.") var json = false

    /// What was made.
    struct Made: Encodable {
        var bundle: String
        var id: String
        var executable: String
        var manifest: String
    }

    func run() throws {
        let fileManager = FileManager.default
        let manifestName = manifestPath.hasSuffix(".json") ? "Info.json" : "Info.plist"
        guard let data = fileManager.contents(atPath: manifestPath) else {
            throw fail("\(QuotedText.quote(manifestPath)) cannot be read; give the path of the app's Info.plist", code: 4)
        }
        let manifest: Manifest
        do {
            manifest = try ManifestParser.parse(
                data, file: manifestPath, format: manifestName == "Info.json" ? .json : .propertyList)
        } catch {
            throw fail("\(error)", code: 4)
        }
        let source = URL(fileURLWithPath: executable).resolvingSymlinksInPath().path
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: source, isDirectory: &isDirectory), !isDirectory.boolValue,
            fileManager.isExecutableFile(atPath: source)
        else {
            throw fail(
                "\(QuotedText.quote(executable)) is not an executable file; build the app first (swift build) and give its path",
                code: 4)
        }
        let folder = URL(fileURLWithPath: output ?? manifest.executable + ".bundle").standardizedFileURL.path
        do {
            try fileManager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let target = folder + "/" + manifest.executable
            try? fileManager.removeItem(atPath: target)
            try fileManager.copyItem(atPath: source, toPath: target)
            try fileManager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: target)
            // Only one manifest, so the daemon reads the one given here.
            for name in ["Info.plist", "Info.json"] { try? fileManager.removeItem(atPath: folder + "/" + name) }
            try data.write(to: URL(fileURLWithPath: folder + "/" + manifestName))
        } catch {
            throw fail("cannot write the bundle \(QuotedText.quote(folder)): \(error); check the folder's permissions", code: 1)
        }
        let made = Made(bundle: folder, id: manifest.id.rawValue, executable: manifest.executable, manifest: manifestName)
        if json {
            print(try ControlClient.encode(made))
        } else {
            print("made \(folder) for \(manifest.id): \(manifest.executable) and \(manifestName); install it with `offstage install \(folder)`")
        }
    }

    /// Writes one line to stderr (JSON with --json) and returns the exit code to throw.
    func fail(_ message: String, code: Int32) -> ExitCode {
        let line = json ? ((try? ControlClient.encode(["error": "offstage.InvalidBundle", "message": message], pretty: false)) ?? message)
            : "offstage: \(message)"
        FileHandle.standardError.write(Data((line + "\n").utf8))
        return ExitCode(code)
    }
}
