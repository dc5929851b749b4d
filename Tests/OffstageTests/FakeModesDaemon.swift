import COffstageSystem
import Foundation
import Glibc
import Synchronization

/// A stand-in for the daemon's main socket and its hand-off socket (`<main>.handoff`), enough for the SDK's accessory
/// and notification calls: it records every call (and the descriptor a hand-off carried) and answers each but oneway
/// calls with what `answer` gives.
final class FakeModesDaemon: Sendable {
    /// One call the stand-in read.
    struct Call: Sendable {
        var method: String
        /// The parameters, as JSON text with sorted keys.
        var parameters: String
        /// The descriptor that came with a hand-off, owned by the stand-in; -1 on the main socket.
        var fd: Int32
    }

    /// The main socket's path (what `OFFSTAGE_SOCKET` names).
    let path: String
    private let directory: String
    private let listeners: [Int32]
    private let answer: @Sendable (String, [String: Any]) -> String
    private let recorded = Mutex<[Call]>([])
    private let connections = Mutex<[Int32]>([])
    private let threads = DispatchGroup()

    /// Serves until ``close()``. `answer` gets the method and parameters of each call and returns the reply message
    /// (`{"parameters":{…}}` or `{"error":…,"parameters":{…}}`); the default answers every call with no parameters.
    init(answer: @escaping @Sendable (String, [String: Any]) -> String = { _, _ in #"{"parameters":{}}"# }) throws {
        var template = Array("/tmp/offstage-accessory-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        directory = String(cString: made)
        path = directory + "/d.sock"
        self.answer = answer
        listeners = try [path, path + ".handoff"].map(Self.listen)
        for (index, listener) in listeners.enumerated() {
            threads.enter()
            Thread.detachNewThread { [self] in
                defer { threads.leave() }
                while true {
                    let connection = accept(listener, nil, nil)
                    guard connection >= 0 else { return }
                    connections.withLock { $0.append(connection) }
                    threads.enter()
                    Thread.detachNewThread { [self] in
                        defer { threads.leave() }
                        serve(connection, handOff: index == 1)
                    }
                }
            }
        }
    }

    /// The calls read so far, in order.
    var calls: [Call] { recorded.withLock { $0 } }

    /// The calls of `method` (its last component, such as `RegisterAccessory`).
    func calls(_ method: String) -> [Call] { calls.filter { $0.method.hasSuffix("." + method) } }

    /// Stops serving, closes every descriptor it received, and removes its folder.
    func close() {
        for listener in listeners { shutdown(listener, Int32(SHUT_RDWR)) }
        for connection in connections.withLock({ $0 }) { shutdown(connection, Int32(SHUT_RDWR)) }
        threads.wait()
        for connection in connections.withLock({ $0 }) { Glibc.close(connection) }
        for listener in listeners { Glibc.close(listener) }
        for call in calls where call.fd >= 0 { Glibc.close(call.fd) }
        unlink(path)
        unlink(path + ".handoff")
        rmdir(directory)
    }

    private static func listen(_ path: String) throws -> Int32 {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard listener >= 0, bound == 0, Glibc.listen(listener, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        return listener
    }

    /// Reads NUL-terminated calls and answers each; a hand-off connection carries one call and its descriptor.
    private func serve(_ connection: Int32, handOff: Bool) {
        var pending: [UInt8] = []
        var fd: Int32 = -1
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var received: Int32 = -1
            let count = buffer.withUnsafeMutableBytes {
                offstage_recv_with_fd(connection, $0.baseAddress, $0.count, &received)
            }
            guard count > 0 else { return }
            if received >= 0 { fd = received }
            pending += buffer[..<count]
            while let end = pending.firstIndex(of: 0) {
                let message = Data(pending[..<end])
                pending.removeSubrange(...end)
                let call = (try? JSONSerialization.jsonObject(with: message)) as? [String: Any] ?? [:]
                let method = call["method"] as? String ?? ""
                let parameters = call["parameters"] as? [String: Any] ?? [:]
                let text =
                    (try? JSONSerialization.data(withJSONObject: parameters, options: .sortedKeys))
                    .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                recorded.withLock { $0.append(Call(method: method, parameters: text, fd: handOff ? fd : -1)) }
                fd = -1
                // A oneway call (`CallbackDone`) gets no reply: one would be read as the answer to the next call.
                if call["oneway"] as? Bool == true { continue }
                let reply = Array(answer(method, parameters).utf8) + [0]
                _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }
}
