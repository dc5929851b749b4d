import Foundation
import Offstage
import OffstageTesting
import Testing

/// Background transfers through the kit (SPEC §5): the app's own session and delegate, the test's server, the
/// daemon's rules for statuses, networks and files; and the kit's answers to bad use.
@Suite("OffstageTesting: background transfers (KIT-2, TR-1, TR-3, TR-4)")
@MainActor
struct TransferTests {
    /// Opens its session at launch; the test calls its methods as the app's own code would.
    final class TransferDelegate: ApplicationDelegate, BackgroundSessionDelegate {
        let configuration: BackgroundSessionConfiguration
        let data: String
        var session: BackgroundSession?
        var events: [String] = []

        init(environment: [String: String], meteredAllowed: Bool = true) {
            var configuration = BackgroundSessionConfiguration.background(withIdentifier: "com.example.transfers.session")
            configuration.allowsExpensiveNetworkAccess = meteredAllowed
            self.configuration = configuration
            data = environment["OFFSTAGE_DATA_DIR"] ?? ""
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            session = BackgroundSession(configuration: configuration, delegate: self)
            return true
        }

        func application(
            _ application: Application, handleEventsForBackgroundURLSession identifier: String,
            completionHandler: @escaping @Sendable () -> Void
        ) {
            events.append("wake \(identifier)")
            completionHandler()
        }

        /// Writes `text` to `name` in the data folder and uploads it.
        func upload(_ text: String, name: String, to url: String) throws -> Int {
            let file = URL(fileURLWithPath: data).appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            return try #require(session).uploadTask(with: URL(string: url)!, fromFile: file, method: "POST").taskIdentifier
        }

        func urlSession(_ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didFinishDownloadingTo location: URL) {
            events.append("file \((try? String(contentsOf: location, encoding: .utf8)) ?? "unreadable")")
        }

        func urlSession(
            _ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didWriteData bytesWritten: Int64,
            totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
        ) {
            events.append("progress \(totalBytesWritten)/\(totalBytesExpectedToWrite)")
        }

        func urlSession(_ session: BackgroundSession, dataTask: BackgroundUploadTask, didReceive data: Data) {
            events.append("answer \(String(decoding: data, as: UTF8.self))")
        }

        func urlSession(_ session: BackgroundSession, task: BackgroundSessionTask, didCompleteWithError error: BackgroundTransferError?) {
            events.append(error.map { "failed \($0.code.rawValue) \($0.httpStatus.map(String.init) ?? "-")" } ?? "completed")
        }
    }

    static let id = "com.example.transfers"

    /// The app installed and opened.
    static func openApp(meteredAllowed: Bool = true) async throws -> (TestDevice, TestApp, TransferDelegate) {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: id) { environment in
            TransferDelegate(environment: environment, meteredAllowed: meteredAllowed)
        }
        try await device.open(app)
        return (device, app, try #require(app.delegate as? TransferDelegate))
    }

    @Test("TR-1: an upload sends a copy of the app's file; the server's answer reaches the delegate before the completion, and the copy goes once the app handled it")
    func uploadGetsItsAnswer() async throws {
        let (device, app, delegate) = try await Self.openApp()
        _ = try delegate.upload("hello", name: "note.txt", to: "https://api.example.com/notes")
        try FileManager.default.removeItem(at: app.dataDirectory.appendingPathComponent("note.txt"))
        try await device.respond(to: "https://api.example.com/notes", with: .status(201, body: Data("saved 5 bytes".utf8)))
        try await device.advance(by: .seconds(1))
        #expect(delegate.events == ["answer saved 5 bytes", "completed"])
        #expect(app.transfers.isEmpty)
        // The kit keeps its copies beside the apps' data folders, as the daemon keeps them in its state directory.
        let copies = app.dataDirectory.deletingLastPathComponent().appendingPathComponent("transfers").path
        #expect((try FileManager.default.contentsOfDirectory(atPath: copies)).isEmpty, "the copy went with the task")
    }

    @Test("TR-1: a download in front reports its progress, then gives the delegate the server's body as its file")
    func downloadInFront() async throws {
        let (device, _, delegate) = try await Self.openApp()
        _ = try #require(delegate.session).downloadTask(with: URL(string: "https://files.example.com/a.txt")!)
        try await device.runUntilIdle()
        try await device.respond(to: "https://files.example.com/a.txt", with: .ok("the file"))
        try await device.advance(by: .seconds(1))
        #expect(delegate.events == ["progress 8/8", "file the file", "completed"])
    }

    @Test("TR-2: a session that does not allow metered networks waits on one, says so, and runs once the device is on Wi-Fi")
    func meteredNetworkWaits() async throws {
        let (device, app, delegate) = try await Self.openApp(meteredAllowed: false)
        try await device.setConditions(network: .metered)
        try await device.respond(to: "https://files.example.com/b.txt", with: .ok("b"))
        _ = try #require(delegate.session).downloadTask(with: URL(string: "https://files.example.com/b.txt")!)
        try await device.advance(by: .seconds(60))
        let waiting = try #require(app.transfers.first)
        #expect(waiting.state == "waiting")
        #expect(!waiting.waitingFor.isEmpty, "\(waiting)")
        try await device.setConditions(network: .unmetered)
        try await device.advance(by: .seconds(1))
        #expect(delegate.events.suffix(2) == ["file b", "completed"])
    }

    @Test("TR-4: a server that cannot be reached leaves the task waiting to try again, with the reason; it completes once the server answers")
    func unreachableServerIsRetried() async throws {
        let (device, app, delegate) = try await Self.openApp()
        try await device.respond(to: "https://down.example.com/c", with: .unreachable("the connection was refused"))
        _ = try #require(delegate.session).downloadTask(with: URL(string: "https://down.example.com/c")!)
        try await device.advance(by: .seconds(1))
        let waiting = try #require(app.transfers.first)
        #expect(waiting.error == "the connection was refused" && waiting.attempts == 1, "\(waiting)")
        try await device.respond(to: "https://down.example.com/c", with: .ok("c"))
        try await device.advance(by: .seconds(3600))
        #expect(delegate.events.suffix(2) == ["file c", "completed"])
    }

    @Test("KIT-6: an upload of a file outside the app's data folder is refused to the app's code, naming the file; nothing is created")
    func uploadOutsideTheDataFolder() async throws {
        let (device, app, delegate) = try await Self.openApp()
        #expect {
            try #require(delegate.session).uploadTask(
                with: URL(string: "https://api.example.com/x")!, fromFile: URL(fileURLWithPath: "/etc/hostname"))
        } throws: { error in
            let transfer = error as? BackgroundTransferError
            return transfer?.code == .invalidArgument && transfer?.message.contains("/etc/hostname") == true
        }
        try await device.runUntilIdle()
        #expect(app.transfers.isEmpty)
        #expect(device.unansweredRequests.isEmpty)
    }

    @Test("KIT-6: bad use of the test's server and of kill is refused with the thing that is wrong, and changes nothing")
    func badUseIsRefused() async throws {
        let (device, app, delegate) = try await Self.openApp()
        _ = try #require(delegate.session).downloadTask(with: URL(string: "https://files.example.com/d")!)
        try await device.runUntilIdle()
        await #expect(throws: TestKitError.invalidArgument("url is empty: give the URL the app's transfer asks for")) {
            try await device.respond(to: "", with: .ok("x"))
        }
        await #expect(throws: TestKitError.invalidArgument("status 42: an HTTP status is 100...599")) {
            try await device.respond(to: "https://files.example.com/d", with: .status(42))
        }
        #expect(device.unansweredRequests == ["https://files.example.com/d"], "still waiting for its answer")
        try await device.forceQuit(app)
        await #expect(throws: TestKitError.invalidArgument("'\(Self.id)' is not running: there is no process to kill")) {
            try await device.kill(app)
        }
    }
}
