import Foundation
import Synchronization

/// A small durable key-value store for saving state before the app is suspended (SPEC LC-5).
///
/// A suspended app may be terminated without any callback, so save what the user would miss in
/// `applicationDidEnterBackground`. Every change is written at once and atomically (a temporary file,
/// `fsync`, then `rename`), so after a crash the file holds either the old or the new values, never a mix.
/// Values are any `Codable`; the file is readable JSON. Safe to use from any thread.
public final class DurableStore: Sendable {
    /// The store in the folder the system keeps for this app (removed when the app is uninstalled).
    public static var standard: DurableStore {
        let directory = DaemonLink.shared.dataDirectory
            ?? FileManager.default.currentDirectoryPath + "/.offstage-data"
        let path = directory + "/state.json"
        // One store per folder: the same object for the life of the process (a test device's app gets its own).
        return opened.withLock { stores in
            if let store = stores[path] { return store }
            let store = DurableStore(path: path)
            stores[path] = store
            return store
        }
    }

    private static let opened = Mutex<[String: DurableStore]>([:])

    /// The file the values live in.
    public let path: String
    private let values: Mutex<[String: String]>

    /// Opens (or creates on first write) the store at `path`.
    public init(path: String) {
        self.path = path
        var loaded: [String: String] = [:]
        if let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        {
            for (key, value) in object {
                if let fragment = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) {
                    loaded[key] = String(decoding: fragment, as: UTF8.self)
                }
            }
        }
        values = Mutex(loaded)
    }

    /// The value for `key`, or nil if there is none or it does not decode as `type`.
    public func value<Value: Decodable>(_ type: Value.Type, forKey key: String) -> Value? {
        guard let text = values.withLock({ $0[key] }) else { return nil }
        return try? JSONDecoder().decode(type, from: Data(text.utf8))
    }

    /// Sets (or, with nil, removes) the value for `key` and writes the store to disk before returning.
    public func set<Value: Encodable>(_ value: Value?, forKey key: String) throws {
        let text = try value.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try values.withLock { values in
            var updated = values
            updated[key] = text
            try write(updated)
            values = updated
        }
    }

    /// Removes the value for `key` and writes the store to disk.
    public func removeValue(forKey key: String) throws {
        try set(Optional<Int>.none, forKey: key)
    }

    /// Every key with a value.
    public var keys: [String] { values.withLock { $0.keys.sorted() } }

    private func write(_ values: [String: String]) throws {
        let body = values.keys.sorted().map { key in
            let name = String(decoding: try! JSONEncoder().encode(key), as: UTF8.self)
            return "  \(name): \(values[key]!)"
        }.joined(separator: ",\n")
        let data = Data("{\n\(body)\n}\n".utf8)
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DurableStoreError(path: temporary, errno: errno) }
        var ok = data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 { if errno == EINTR { continue } else { return false } }
                offset += written
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        let savedErrno = errno
        close(fd)
        guard ok else {
            unlink(temporary)
            throw DurableStoreError(path: temporary, errno: savedErrno)
        }
        guard rename(temporary, path) == 0 else {
            let renameErrno = errno
            unlink(temporary)
            throw DurableStoreError(path: path, errno: renameErrno)
        }
        // The rename itself is durable only once the folder is synced.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}

/// Why the durable store could not be written.
public struct DurableStoreError: Error, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The system error number.
    public var errno: Int32

    public var description: String {
        "cannot write \(path): \(String(cString: strerror(errno))); check that the folder exists and is writable"
    }
}
