import Foundation
import Testing

/// The README's "A complete app" and "Run it", taken from the README's own text and run as a newcomer would: the
/// three files written as shown, the steps run by bash one after the other, with the built `offstaged` and `offstage`
/// on `PATH` (what `scripts/install` does), a fresh home folder and no `XDG_RUNTIME_DIR`.
@Suite("The README works verbatim", .serialized)
struct ReadmeTests {
    /// The repository: this file is `Tests/IntegrationTests/ReadmeTests.swift` in it.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The body of the first fenced code block after the line containing `marker`.
    static func codeBlock(after marker: String, in text: String) throws -> String {
        guard let start = text.range(of: marker) else { throw HarnessError("the README has no '\(marker)'") }
        let rest = text[start.upperBound...]
        guard let open = rest.range(of: "```"), let lineEnd = rest[open.upperBound...].firstIndex(of: "\n"),
            let close = rest[lineEnd...].range(of: "\n```")
        else { throw HarnessError("no code block after '\(marker)' in the README") }
        return String(rest[rest.index(after: lineEnd)..<close.lowerBound]) + "\n"
    }

    @Test("README: the complete app builds against this repository, and every step of 'Run it' succeeds in order")
    func readmeRunsVerbatim() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let package = try Self.codeBlock(after: "`Package.swift`:", in: readme)
        let source = try Self.codeBlock(after: "`Sources/Weather/Weather.swift`:", in: readme)
        let manifest = try Self.codeBlock(after: "`Info.plist`, at the top of the package:", in: readme)
        let steps = try Self.codeBlock(after: "Run it, from the `Weather` folder", in: readme)

        let fileManager = FileManager.default
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("offstage-readme-\(UUID().uuidString.prefix(8))")
        let weather = root.appendingPathComponent("Weather")
        try fileManager.createDirectory(at: weather.appendingPathComponent("Sources/Weather"), withIntermediateDirectories: true)
        try fileManager.createDirectory(at: root.appendingPathComponent("home"), withIntermediateDirectories: true)
        try fileManager.createSymbolicLink(at: root.appendingPathComponent("offstage"), withDestinationURL: Self.repository)
        try package.write(to: weather.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try source.write(to: weather.appendingPathComponent("Sources/Weather/Weather.swift"), atomically: true, encoding: .utf8)
        try manifest.write(to: weather.appendingPathComponent("Info.plist"), atomically: true, encoding: .utf8)
        var pids: [Int32] = []
        defer {
            for pid in pids where ProcessProbe.isAlive(pid) { kill(pid, SIGKILL) }
            try? fileManager.removeItem(at: root)
            // SwiftPM leaves lock files in the temporary folder named after the package's paths: ours go too.
            let prefix = root.path.replacingOccurrences(of: "/", with: "_")
            let temporary = URL(fileURLWithPath: NSTemporaryDirectory())
            for name in (try? fileManager.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix(prefix) {
                try? fileManager.removeItem(at: temporary.appendingPathComponent(name))
            }
        }

        // A newcomer's shell: the binaries on PATH, a home of its own, no runtime folder and no Offstage variables.
        var environment = ProcessInfo.processInfo.environment
        for key in ["XDG_RUNTIME_DIR", "XDG_STATE_HOME", "OFFSTAGE_SOCKET", "OFFSTAGE_STATE_DIR"] { environment[key] = nil }
        environment["HOME"] = root.appendingPathComponent("home").path
        environment["PATH"] = DaemonHarness.products.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let bash = Process()
        bash.executableURL = URL(fileURLWithPath: "/bin/bash")
        bash.arguments = ["-e", "-c", steps]
        bash.currentDirectoryURL = weather
        bash.environment = environment
        let output = root.appendingPathComponent("output.txt")
        _ = fileManager.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        bash.standardOutput = handle
        bash.standardError = handle
        try bash.run()
        pids.append(bash.processIdentifier)
        let deadline = Date().addingTimeInterval(900)
        while bash.isRunning && Date() < deadline { usleep(100_000) }
        if bash.isRunning { kill(bash.processIdentifier, SIGKILL) }
        bash.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""

        // The daemon's and the app's pids, as the steps printed them, so they can be checked and never left behind.
        func pid(after prefix: String) -> Int32? {
            guard let range = text.range(of: prefix) else { return nil }
            return Int32(text[range.upperBound...].prefix { $0.isNumber })
        }
        let daemon = pid(after: ", pid ")
        let app = pid(after: "opened com.example.weather (pid ")
        pids += [daemon, app].compactMap { $0 }
        #expect(bash.terminationStatus == 0, "the steps failed:\n\(text)")
        for line in [
            "made ", "offstaged ", "installed com.example.weather", "opened com.example.weather (pid ",
            "waiting [time-window]: its earliest begin date", "started com.example.weather.refresh in com.example.weather (forced)",
            "task 'com.example.weather.refresh' completed after", "stopping: ending apps",
        ] {
            #expect(text.contains(line), "no '\(line)' in:\n\(text)")
        }
        // `kill %1` stops the daemon, which ends the app first.
        for pid in [daemon, app].compactMap({ $0 }) {
            let gone = Date().addingTimeInterval(15)
            while ProcessProbe.isAlive(pid) && Date() < gone { usleep(50_000) }
            #expect(!ProcessProbe.isAlive(pid), "pid \(pid) outlived `kill %1`")
        }
        let appOutput = (try? String(
            contentsOfFile: root.path + "/home/.local/state/offstage/logs/com.example.weather.log", encoding: .utf8)) ?? ""
        #expect(appOutput.contains("launched (user)") && appOutput.contains("showing"), "app output:\n\(appOutput)")
    }
}
