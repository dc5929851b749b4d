import Foundation

/// Builds WAV files byte by byte, so tests control every field, including wrong ones.
struct WAVBuilder {
    /// The WAVE format code: 1 PCM, 3 float, 0xFFFE extensible, 85 MP3 …
    var format: UInt16 = 1
    /// Channels declared.
    var channels: UInt16 = 1
    /// Sample rate declared.
    var sampleRate: UInt32 = 8000
    /// Bits per sample declared.
    var bits: UInt16 = 16
    /// The real format inside an extensible header (format 0xFFFE).
    var subformat: UInt16 = 1
    /// Bytes per frame declared; nil computes it.
    var blockAlign: UInt16?
    /// The sample bytes.
    var samples: [UInt8] = []
    /// The data chunk's declared size; nil is the true size.
    var declaredDataSize: UInt32?
    /// Chunks before "fmt ", as (id, body).
    var chunksBefore: [(String, [UInt8])] = []
    /// Chunks between "fmt " and "data".
    var chunksBetween: [(String, [UInt8])] = []
    /// Whether "data" comes before "fmt ".
    var dataFirst = false

    /// 16-bit PCM of these samples.
    static func pcm16(_ values: [Int16], channels: UInt16 = 1, sampleRate: UInt32 = 8000) -> WAVBuilder {
        WAVBuilder(channels: channels, sampleRate: sampleRate, samples: values.flatMap { le(UInt16(bitPattern: $0)) })
    }

    /// A sine of `seconds` at `frequency` Hz and `amplitude` (0...1), 16-bit.
    static func sine(seconds: Double, frequency: Double = 440, amplitude: Double = 0.5, channels: UInt16 = 1,
                     sampleRate: UInt32 = 8000) -> WAVBuilder {
        let frames = Int(seconds * Double(sampleRate))
        let values = (0..<frames).flatMap { i in
            let value = Int16(amplitude * 32767 * sin(2 * .pi * frequency * Double(i) / Double(sampleRate)))
            return [Int16](repeating: value, count: Int(channels))
        }
        return pcm16(values, channels: channels, sampleRate: sampleRate)
    }

    /// The file's bytes.
    var bytes: [UInt8] {
        var fmt = le(format) + le(channels) + le(sampleRate)
        let align = blockAlign ?? channels * bits / 8
        fmt += le(sampleRate * UInt32(align)) + le(align) + le(bits)
        if format == 0xFFFE {
            // cbSize 22, valid bits, channel mask, then the sub-format GUID (its first two bytes are the format).
            fmt += le(UInt16(22)) + le(bits) + le(UInt32(0)) + le(subformat)
            fmt += [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        }
        let data = chunk("data", samples, declared: declaredDataSize)
        var body = Array("WAVE".utf8)
        for (id, content) in chunksBefore { body += chunk(id, content) }
        if dataFirst { body += data }
        body += chunk("fmt ", fmt)
        for (id, content) in chunksBetween { body += chunk(id, content) }
        if !dataFirst { body += data }
        return Array("RIFF".utf8) + le(UInt32(body.count)) + body
    }

    /// Writes the file into `directory` as `name` and returns its URL.
    func write(_ name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    /// A chunk: id, size (or `declared`), body, pad byte for an odd size.
    private func chunk(_ id: String, _ body: [UInt8], declared: UInt32? = nil) -> [UInt8] {
        Array(id.utf8) + le(declared ?? UInt32(body.count)) + body + (body.count % 2 == 1 ? [0] : [])
    }
}

/// Little-endian bytes of an integer.
func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}

/// A temporary folder removed when the test is done with it.
final class TemporaryFolder: Sendable {
    /// The folder.
    let url: URL

    /// Creates a fresh folder under the system's temporary folder.
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Removes the folder.
    deinit { try? FileManager.default.removeItem(at: url) }
}
