import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// `io.offstage.Transfers` on the real daemon, called from inside app processes (SPEC TR-1, §11 security): bad input
/// is refused naming what is wrong and creates nothing; an app cannot see or change another app's transfers or send
/// a file that is not its own; an upload sends the app's file whole.
@Suite("Transfers interface: bad input, isolation, uploads (SPEC TR-1, §11)", .serialized)
struct TransferInterfaceIntegrationTests {
    static let app = "com.example.finite-task"
    static let other = "com.example.other"

    static func error(_ reply: [String: Any]) -> String? { reply["error"] as? String }
    static func message(_ reply: [String: Any]) -> String {
        ((reply["parameters"] as? [String: Any])?["message"] as? String) ?? ""
    }

    @Test("TR-1: bad calls are refused naming what is wrong — unknown session, kind, URL, reserved header, a file outside the app's folder or through a symlink — and create nothing")
    func badInput() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            let data = daemon.stateDirectory + "/data/" + Self.app
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: data + "/passwd", withDestinationPath: "/etc/passwd")
            let create = TransfersInterface.Method.createTask
            let replies = try daemon.callAsApp(
                Self.app,
                [
                    (TransfersInterface.Method.openSession, ["identifier": "s"]),
                    (create, ["session": "nope", "kind": "download", "url": "http://127.0.0.1:9/x"]),
                    (create, ["session": "s", "kind": "sideways", "url": "http://127.0.0.1:9/x"]),
                    (create, ["session": "s", "kind": "download", "url": "ftp://127.0.0.1/x"]),
                    (create, ["session": "s", "kind": "download", "url": "http://127.0.0.1:9/x", "headers": [["name": "Range", "value": "bytes=0-"]]]),
                    (create, ["session": "s", "kind": "upload", "url": "http://127.0.0.1:9/x", "file": "/etc/passwd"]),
                    (create, ["session": "s", "kind": "upload", "url": "http://127.0.0.1:9/x", "file": data + "/passwd"]),
                    (create, ["session": "s", "kind": "upload", "url": "http://127.0.0.1:9/x", "file": data + "/missing"]),
                    (create, ["session": "s", "kind": "upload", "url": "http://127.0.0.1:9/x"]),
                    (TransfersInterface.Method.changeTask, ["id": 1, "change": "explode"]),
                    (TransfersInterface.Method.openSession, ["identifier": ""]),
                ])
            #expect(Self.error(replies[0]) == nil, "\(replies[0])")
            #expect(Self.error(replies[1]) == "io.offstage.Transfers.NoSuchTask" && Self.message(replies[1]).contains("no background session 'nope'"))
            #expect(Self.error(replies[2]) == "io.offstage.Transfers.InvalidArgument" && Self.message(replies[2]).contains("sideways"))
            #expect(Self.message(replies[3]).contains("not an http or https URL"), "\(replies[3])")
            #expect(Self.message(replies[4]).contains("Range"), "\(replies[4])")
            #expect(Self.message(replies[5]).contains("outside the app's data folder"), "\(replies[5])")
            #expect(Self.message(replies[6]).contains("outside the app's data folder"), "a symlink out is refused: \(replies[6])")
            #expect(Self.message(replies[7]).contains("does not exist"), "\(replies[7])")
            #expect(Self.message(replies[8]).contains("needs the file"), "\(replies[8])")
            #expect(Self.error(replies[9]) == "io.offstage.Transfers.InvalidArgument" && Self.message(replies[9]).contains("explode"))
            #expect(Self.error(replies[10]) == "io.offstage.Transfers.InvalidArgument")
            for reply in replies.dropFirst() {
                let fix = (reply["parameters"] as? [String: Any])?["fix"] as? String
                #expect(fix?.isEmpty == false, "every refusal names the fix: \(reply)")
            }
            #expect(try daemon.ok("--json", "transfers") == "[]\n", "nothing was created")
            let spool = (try? FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/transfers/" + Self.app)) ?? []
            #expect(spool.isEmpty, "no upload spooled: \(spool)")
        }
    }

    @Test("§11 security: an app cannot see, change or open another app's transfers or sessions")
    func isolation() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.install("FiniteTask", id: Self.other)
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            let mine = try daemon.callAsApp(
                Self.app,
                [
                    (TransfersInterface.Method.openSession, ["identifier": "s"]),
                    (TransfersInterface.Method.createTask, ["session": "s", "kind": "download", "url": "http://127.0.0.1:9/x", "earliestBegin": DaemonHarness.now() + 3600]),
                ])
            let task = try #require((mine[1]["parameters"] as? [String: Any])?["task"] as? [String: Any], "\(mine)")
            let id = try #require((task["id"] as? NSNumber)?.uint64Value)
            try daemon.ok("open", Self.other)
            try daemon.waitFor(Self.other, "active")
            let theirs = try daemon.callAsApp(
                Self.other,
                [
                    (TransfersInterface.Method.changeTask, ["id": id, "change": "cancel"]),
                    (TransfersInterface.Method.tasks, ["session": "s"]),
                    (TransfersInterface.Method.acknowledge, ["session": "s", "ids": [id]]),
                    (TransfersInterface.Method.openSession, ["identifier": "s"]),
                    (TransfersInterface.Method.tasks, ["session": "s"]),
                ])
            #expect(Self.error(theirs[0]) == "io.offstage.Transfers.NoSuchTask", "\(theirs[0])")
            #expect(Self.message(theirs[0]).contains("no transfer \(id) of '\(Self.other)'"))
            #expect(Self.error(theirs[1]) == "io.offstage.Transfers.NoSuchTask", "\(theirs[1])")
            #expect(Self.error(theirs[2]) == "io.offstage.Transfers.NoSuchTask", "\(theirs[2])")
            let ownSession = (theirs[4]["parameters"] as? [String: Any])?["tasks"] as? [Any]
            #expect(ownSession?.isEmpty == true, "a session of the same name is the other app's own, empty: \(theirs[4])")
            let listed = try daemon.ok("--json", "transfers", Self.app)
            #expect(listed.contains("\"state\" : \"waiting\"") || listed.contains("\"state\":\"waiting\""), "untouched: \(listed)")
        }
    }

    @Test("TR-1: an upload sends the app's file whole (PUT to nginx); the app may delete its file at once, the daemon keeps its own link")
    func upload() throws {
        let nginx = try NginxServer.start()
        defer { nginx.stop() }
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            let data = daemon.stateDirectory + "/data/" + Self.app
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            var generator = SystemRandomNumberGenerator()
            let bytes = Data((0..<(3 << 20) / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } })
            try bytes.write(to: URL(fileURLWithPath: data + "/report.bin"))
            let replies = try daemon.callAsApp(
                Self.app,
                [
                    (TransfersInterface.Method.openSession, ["identifier": "up"]),
                    (TransfersInterface.Method.createTask, ["session": "up", "kind": "upload", "url": nginx.url("/upload/report.bin"), "file": data + "/report.bin"]),
                ])
            #expect(Self.error(replies[1]) == nil, "\(replies[1])")
            try FileManager.default.removeItem(atPath: data + "/report.bin")
            try daemon.waitUntil("the upload completed", timeout: 20) {
                (try daemon.ok("--json", "transfers")).contains("completed")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/report.bin")) == bytes, "the server has the same bytes")
        }
    }
}
