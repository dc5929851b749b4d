import Foundation
import Offstage
import OffstageTesting
import Testing

@testable import Downloader

/// The Downloader example's own tests, as its developer would write them with the test kit: its real delegate and
/// `Info.plist`, its server answered by the test, on virtual time, with no daemon (SPEC TR-1, TR-3, TR-4).
@Suite("Downloader, tested with OffstageTesting (KIT-1, TR-1, TR-3, TR-4)")
@MainActor
struct DownloaderTests {
    static let infoPlist = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/Downloader/Info.plist")
    /// Where the bundled manifest points the app (`DOWNLOADER_URL`).
    static let url = "http://127.0.0.1:8080/download.bin"
    /// 3 MB that are not all one byte, so that a file cut short or shifted is noticed.
    static let body = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })

    /// The downloader installed, opened — it starts its download, which the server does not answer yet — and left:
    /// suspended while the daemon's transfer waits.
    static func suspendedDownloader() async throws -> (TestDevice, TestApp) {
        let device = await TestDevice()
        let app = try device.install(infoPlist: infoPlist) { environment in DownloaderDelegate(environment: environment) }
        try await device.open(app)
        #expect(device.unansweredRequests == [url], "the app started its download at launch")
        try await device.home()
        try await device.advance(by: .seconds(2))
        #expect(app.isSuspended)
        return (device, app)
    }

    static func downloaded(_ app: TestApp) -> Data? {
        FileManager.default.contents(atPath: app.dataDirectory.appendingPathComponent("Downloads/download.bin").path)
    }

    static func completions(_ app: TestApp) -> [String] {
        let text = (try? String(contentsOf: app.dataDirectory.appendingPathComponent("completions.log"), encoding: .utf8)) ?? ""
        // Each line is the wall-clock time the app printed, `task <id>`, and the outcome: the outcome is what counts.
        return text.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 3).dropFirst(3).first.map(String.init) ?? "" }
    }

    @Test("TR-1, TR-3: a download started in front finishes while the app is suspended; the app is woken for its session's events, keeps the file and completes the wake, then is suspended again")
    func finishesWhileSuspended() async throws {
        let (device, app) = try await Self.suspendedDownloader()
        app.clearCallbacks()
        try await device.respond(to: Self.url, with: .ok(Self.body))
        try await device.advance(by: .seconds(1))  // 3 MB at the network's 10 MB/s
        #expect(app.callbacks.contains(.other("transferEvents")), "woken for the session's events: \(app.callbacks)")
        #expect(Self.downloaded(app) == Self.body, "moved into Downloads whole")
        #expect(Self.completions(app).count == 1)
        #expect(Self.completions(app).first?.hasPrefix("completed Downloads/download.bin 3000000 bytes sha256=") == true)
        #expect(app.transfers.isEmpty, "handled and acknowledged: the system forgot it")
        try await device.advance(by: .seconds(2))
        #expect(app.isSuspended, "suspended again once it called the wake's completion handler")
        #expect(app.launches == [.user], "the process that started the download got the events: no new launch")
    }

    @Test("TR-3: killed while suspended, the app does not lose its download: the system finishes it and launches the app in the background for its session's events")
    func acrossAKill() async throws {
        let (device, app) = try await Self.suspendedDownloader()
        try await device.kill(app)
        #expect(!app.isRunning)
        #expect(app.exits == ["killed by signal 9"])
        try await device.respond(to: Self.url, with: .ok(Self.body))
        try await device.advance(by: .seconds(1))
        #expect(app.launches == [.user, .transferEvents], "launched again for the events")
        #expect(Self.downloaded(app) == Self.body)
        #expect(Self.completions(app).first?.hasPrefix("completed Downloads/download.bin 3000000 bytes") == true)
        #expect(app.state == .background || app.state == .suspended, "the relaunch stays in the background: \(app.state)")
        // Opened again, it finds the file and downloads nothing.
        try await device.advance(by: .seconds(60))
        try await device.open(app)
        #expect(device.unansweredRequests.isEmpty)
        #expect(app.transfers.isEmpty)
    }

    @Test("TR-4: the server answers 404: the download fails with the status, the delegate hears it and nothing is written to Downloads")
    func notFoundFailsIt() async throws {
        let (device, app) = try await Self.suspendedDownloader()
        try await device.respond(to: Self.url, with: .status(404))
        try await device.advance(by: .seconds(1))
        #expect(Self.completions(app) == ["failed http-status 404: the server answered 404 Not Found"])
        #expect(Self.downloaded(app) == nil)
    }

    @Test("TR-4: a 503 with Retry-After is retried when the server said, not before; the next answer completes it")
    func unavailableIsRetried() async throws {
        let (device, app) = try await Self.suspendedDownloader()
        try await device.respond(to: Self.url, with: .status(503, retryAfter: .seconds(120)))
        try await device.advance(by: .seconds(1))
        let waiting = try #require(app.transfers.first)
        #expect(waiting.state == "waiting" && waiting.attempts == 1, "\(waiting)")
        #expect(waiting.error == "the server answered 503 Service Unavailable")
        #expect(Self.completions(app).isEmpty, "not finished: the app hears nothing")
        try await device.respond(to: Self.url, with: .ok(Self.body))
        try await device.advance(by: .seconds(60))
        #expect(Self.completions(app).isEmpty, "the server asked for two minutes")
        try await device.advance(by: .seconds(70))
        #expect(Self.downloaded(app) == Self.body)
        #expect(app.transfers.isEmpty)
    }

    @Test("TR-3: force-quit by the user, the app's download is cancelled; opened again, it hears so and starts it afresh")
    func forceQuitCancelsIt() async throws {
        let (device, app) = try await Self.suspendedDownloader()
        try await device.forceQuit(app)
        #expect(device.unansweredRequests.isEmpty, "the request was stopped")
        try await device.open(app)
        #expect(Self.completions(app).first?.hasPrefix("failed force-quit") == true, "\(Self.completions(app))")
        #expect(device.unansweredRequests == [Self.url], "started again")
    }
}
