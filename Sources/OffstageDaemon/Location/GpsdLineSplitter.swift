import Foundation

/// Cuts gpsd's byte stream into lines, dropping any line longer than the limit (as malformed) without
/// buffering it, so a peer that never sends a newline cannot grow the daemon's memory.
struct GpsdLineSplitter {
    /// The longest line kept, in bytes.
    let maximumLength: Int
    private var partial: [UInt8] = []
    private var discarding = false

    /// A splitter that keeps lines of at most `maximumLength` bytes.
    init(maximumLength: Int) { self.maximumLength = maximumLength }

    /// Adds received bytes; returns the lines completed (without `\r\n`, blank ones left out) and how many
    /// overlong lines were dropped.
    mutating func append(_ bytes: [UInt8]) -> (lines: [Data], overlong: Int) {
        var lines: [Data] = []
        var overlong = 0
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                } else {
                    while partial.last == UInt8(ascii: "\r") || partial.last == UInt8(ascii: " ") { partial.removeLast() }
                    if !partial.isEmpty { lines.append(Data(partial)) }
                }
                partial.removeAll(keepingCapacity: true)
            } else if !discarding {
                partial.append(byte)
                if partial.count > maximumLength {
                    overlong += 1
                    discarding = true
                    partial.removeAll(keepingCapacity: true)
                }
            }
        }
        return (lines, overlong)
    }
}
