import Foundation

/// The named counters nftables lists as JSON: one document per `list` command, one after the other, such as
/// `{"nftables": [{"metainfo": {…}}, {"counter": {"name": "app3_in", "packets": 12, "bytes": 5008117, …}}]}`.
enum NetworkCounters {
    /// What one app's sockets moved.
    struct Bytes: Hashable, Sendable {
        var received: Int64
        var sent: Int64
    }

    private struct Document: Decodable {
        struct Item: Decodable {
            struct Counter: Decodable {
                let name: String
                let bytes: Int64
            }
            let counter: Counter?
        }
        let nftables: [Item]
    }

    /// The bytes of every counter in `output`, by name; what cannot be read is left out.
    static func parse(_ output: String) -> [String: Int64] {
        var bytes: [String: Int64] = [:]
        let decoder = JSONDecoder()
        for text in documents(in: Array(output.utf8)) {
            guard let document = try? decoder.decode(Document.self, from: Data(text)) else { continue }
            for case let counter? in document.nftables.map(\.counter) { bytes[counter.name] = max(0, counter.bytes) }
        }
        return bytes
    }

    /// The top-level JSON objects of `bytes`, however they are separated (braces inside strings do not count).
    static func documents(in bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var depth = 0
        var start = 0
        var inString = false
        var escaped = false
        for (index, byte) in bytes.enumerated() {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"):
                if depth == 0 { start = index }
                depth += 1
            case UInt8(ascii: "}") where depth > 0:
                depth -= 1
                if depth == 0 { result.append(bytes[start...index]) }
            default: break
            }
        }
        return result
    }
}
