import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// An upload's response body end to end (SPEC TR-1, TR-3, TR-6; decision 0041): the real daemon uploads to a real
/// server that answers the bytes back (`transfer_fault_server.py`'s `/echo/`), and the real `Downloader` example's
/// delegate gets the body in `urlSession(_:dataTask:didReceive:)`, exact, once — also when it is launched for the
/// session's events after a daemon restart. The uploads are created as an app creates them: from a process in the
/// app's cgroup, in the session the app has open.
@Suite("An upload's response body on the real daemon (SPEC TR-1, TR-3, TR-6)", .serialized)
struct TransferUploadResponseTests {
    static let app = "com.example.downloader"
    static let session = "com.example.downloader.session"

    static func data(_ daemon: DaemonHarness) -> String { daemon.stateDirectory + "/data/" + app }

    static func completions(_ daemon: DaemonHarness) -> [Substring] {
        let text = (try? String(contentsOfFile: data(daemon) + "/completions.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n")
    }

    /// Installs the downloader with nothing to download, opens it, and waits until its session is open.
    static func openApp(_ daemon: DaemonHarness) throws {
        try daemon.install("Downloader", id: app)
        try daemon.ok("open", app)
        try daemon.waitUntil("the app opened its session") { daemon.output(app).contains("DOWNLOADER_URL is not set") }
    }

    /// Writes `count` random bytes as `name` in the app's data folder; returns them.
    static func appFile(_ daemon: DaemonHarness, _ name: String, _ count: Int) throws -> Data {
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<count / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } })
        try FileManager.default.createDirectory(atPath: data(daemon), withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: data(daemon) + "/" + name))
        return bytes
    }

    /// Creates an upload (POST) of the app's file `name` to `url`; returns its id.
    static func upload(_ daemon: DaemonHarness, _ name: String, to url: String, earliestBegin: Double? = nil) throws -> Int {
        var parameters: [String: Any] = ["session": session, "kind": "upload", "method": "POST", "url": url, "file": data(daemon) + "/" + name]
        if let earliestBegin { parameters["earliestBegin"] = earliestBegin }
        let replies = try daemon.callAsApp(app, [(TransfersInterface.Method.createTask, parameters)])
        let task = try #require((replies[0]["parameters"] as? [String: Any])?["task"] as? [String: Any], "\(replies)")
        return try #require((task["id"] as? NSNumber)?.intValue)
    }

    /// What the app's delegate kept of task `id`'s response body.
    static func received(_ daemon: DaemonHarness, _ id: Int) -> Data? {
        FileManager.default.contents(atPath: data(daemon) + "/Responses/task-\(id).body")
    }

    @Test("TR-1: the app's delegate receives each upload's response body, exact, once and before its completion; a body over the 64 KiB cap is cut at the cap and flagged")
    func responseBodyReachesTheDelegateOnce() throws {
        let server = try TransferFaultServer.start()
        defer { server.stop() }
        try withDaemon { daemon in
            try Self.openApp(daemon)
            let small = try Self.appFile(daemon, "small.bin", 3_000)
            let big = try Self.appFile(daemon, "big.bin", 200_000)
            let first = try Self.upload(daemon, "small.bin", to: server.url("/echo/small.bin"))
            let second = try Self.upload(daemon, "big.bin", to: server.url("/echo/big.bin"))
            try daemon.waitUntil("both uploads are handled", timeout: 30) { Self.completions(daemon).count == 2 }
            #expect(Self.received(daemon, first) == small, "the server's exact body")
            #expect(Self.received(daemon, second) == big.prefix(65_536), "cut at the cap")
            #expect(FileManager.default.contents(atPath: server.root + "/big.bin") == big, "the upload itself is whole")
            let output = daemon.output(Self.app)
            let lines = output.split(separator: "\n")
            #expect(lines.filter { $0.hasSuffix("response task \(first): 3000 bytes") }.count == 1, "\(output)")
            #expect(lines.filter { $0.hasSuffix("response task \(second): 65536 bytes cut") }.count == 1, "\(output)")
            for id in [first, second] {
                let response = try #require(lines.firstIndex { $0.contains("response task \(id):") })
                let completed = try #require(lines.firstIndex { $0.contains("task \(id) completed") })
                #expect(response < completed, "the body comes before the completion")
            }
            #expect(Self.completions(daemon).allSatisfy { $0.contains("completed") })
            try daemon.waitUntil("acknowledged, the daemon forgets them") { try daemon.ok("--json", "transfers") == "[]\n" }
        }
    }

    @Test("TR-3, TR-6: an upload journaled before a daemon restart runs after it; its body is kept with the task, the app is launched into the background for the session's events and its delegate receives the exact body once")
    func responseBodyAfterRelaunch() throws {
        let server = try TransferFaultServer.start()
        defer { server.stop() }
        try withDaemon { daemon in
            try Self.openApp(daemon)
            let report = try Self.appFile(daemon, "report.bin", 10_000)
            let id = try Self.upload(daemon, "report.bin", to: server.url("/echo/report.bin"), earliestBegin: DaemonHarness.now() + 4)
            daemon.stop()
            try daemon.start()
            #expect(try daemon.app(Self.app).state == "notRunning")
            try daemon.waitUntil("the upload is handled", timeout: 40) { !Self.completions(daemon).isEmpty }
            #expect(Self.received(daemon, id) == report, "the server's exact body")
            let output = daemon.output(Self.app)
            #expect(output.contains("did-finish-launching (transfer-events)"), "\(output)")
            #expect(output.split(separator: "\n").filter { $0.hasSuffix("response task \(id): 10000 bytes") }.count == 1, "\(output)")
            #expect(Self.completions(daemon).count == 1)
        }
    }
}
