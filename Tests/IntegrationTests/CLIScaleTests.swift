import Foundation
import OffstageProtocol
import Testing

/// What the CLI reads at the sizes of a full phone (SPEC §11 scale: 1,000 apps, 10,000 task requests).
@Suite("The CLI at scale (SPEC §11, CLI-2)")
struct CLIScaleTests {
    /// One task request as the daemon lists it.
    static func task(_ index: Int) -> [String: Any] {
        [
            "app": "com.example.app\(index / 10)", "identifier": "com.example.task\(index % 10)", "kind": "processing",
            "state": "pending", "earliestBegin": 1_800_000_000.5, "requiresNetwork": false, "requiresExternalPower": true,
            "submittedAt": 1_799_990_000.25, "plannedAt": NSNull(), "plannedReason": NSNull(),
            "holds": [
                ["controller": "time", "reason": "earliest begin date not reached", "until": 1_800_000_000.5],
                ["controller": "power", "reason": "needs external power", "until": NSNull()],
            ],
            "startedAt": NSNull(), "expiresAt": NSNull(), "forced": NSNull(),
            "summary": "pending: waiting for its earliest begin date and for external power",
        ]
    }

    @Test("CLI-2: `offstage tasks` reads a reply of 10,000 requests, over the protocol's 1 MiB default")
    func largeTasksReply() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-cli-scale-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("fake.sock").path

        let tasks = (0..<10_000).map(Self.task)
        var encoded = try JSONSerialization.data(withJSONObject: ["parameters": ["tasks": tasks]])
        encoded.append(0)
        let reply = encoded
        #expect(reply.count > 2 << 20, "the reply is \(reply.count) bytes")

        // A daemon stand-in: answers one call on one connection with the reply above.
        let listener = try Self.listen(path)
        defer { close(listener) }
        let served = Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) == 1 && byte != 0 {}
            var offset = 0
            while offset < reply.count {
                let written = reply[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { return }
                offset += written
            }
        }
        served.start()

        let output = try DaemonHarness.Client(socket: path).run(["--json", "tasks"])
        #expect(output.status == 0, "\(output.stderr)")
        let listed = try JSONDecoder().decode([ControlInterface.TaskMessage].self, from: Data(output.stdout.utf8))
        #expect(listed.count == 10_000)
        #expect(listed.last?.app == "com.example.app999")
    }

    static func listen(_ path: String) throws -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 1) == 0 else {
            close(fd)
            throw HarnessError("cannot listen at \(path): errno \(errno)")
        }
        return fd
    }
}
