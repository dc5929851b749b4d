import Foundation

/// A RIFF/WAVE sound file, read whole at once: PCM integer samples of 8, 16, 24 or 32 bits, or IEEE float samples
/// of 32 bits, any channel count and sample rate (also in the WAVE_FORMAT_EXTENSIBLE wrapping).
///
/// Chunks other than "fmt " and "data" (LIST, fact, cue …) are skipped. The file is mapped rather than copied when
/// the system allows, so a long track costs its size in page cache, not in the heap; samples are converted to
/// signed 16-bit on demand, a chunk at a time, by ``int16Samples(frames:)``.
public struct WAVFile: Sendable {
    /// How the samples are stored in the file.
    public enum Encoding: Sendable, Equatable {
        /// Integer PCM of this many bits per sample (8 is unsigned, the others signed, as WAV defines).
        case integer(bits: Int)
        /// IEEE 754 single precision, nominally within -1...1.
        case float32
    }

    /// The file this was read from.
    public let url: URL
    /// Frames per second.
    public let sampleRate: Int
    /// Samples per frame (1 mono, 2 stereo …).
    public let channels: Int
    /// Whole frames in the data chunk (a partial frame at its end is ignored).
    public let frameCount: Int
    /// How the samples are stored.
    public let encoding: Encoding
    /// The file's bytes.
    private let bytes: Data
    /// Where the first sample is in `bytes`.
    private let dataStart: Int
    /// Bytes per frame in the file.
    private let bytesPerFrame: Int

    /// The length in seconds.
    public var duration: TimeInterval { Double(frameCount) / Double(sampleRate) }

    /// Reads and checks the file; throws an ``AudioPlayerError`` naming the file, the fault and the fix.
    public init(contentsOf url: URL) throws {
        let bytes: Data
        do {
            bytes = try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw AudioPlayerError.unreadable(url, reason: (error as NSError).localizedDescription)
        }
        try self.init(bytes: bytes, url: url)
    }

    /// Parses `bytes` (a whole file, indexed from 0) as if read from `url`.
    init(bytes: Data, url: URL) throws {
        // Data read from a file is indexed from 0; a slice would not be, so rebase once here.
        let bytes = bytes.startIndex == 0 ? bytes : Data(bytes)
        self.url = url
        self.bytes = bytes
        guard bytes.count >= 12, Self.fourCC(bytes, at: 0) == "RIFF" else { throw AudioPlayerError.notRIFF(url) }
        guard Self.fourCC(bytes, at: 8) == "WAVE" else {
            throw AudioPlayerError.notWAVE(url, form: Self.fourCC(bytes, at: 8))
        }
        let chunks = Self.chunks(bytes)
        guard let format = chunks.format else { throw AudioPlayerError.missingChunk(url, chunk: "fmt ") }
        guard format.count >= 16 else { throw AudioPlayerError.formatChunkTooShort(url, bytes: format.count) }
        let start = format.lowerBound
        var tag = Int(Self.u16(bytes, at: start))
        if tag == 0xFFFE, format.count >= 26 {
            // WAVE_FORMAT_EXTENSIBLE: the real format code is the first two bytes of the sub-format GUID.
            tag = Int(Self.u16(bytes, at: start + 24))
        }
        guard tag == 1 || tag == 3 else { throw AudioPlayerError.notPCM(url, format: tag, name: Self.formatName(tag)) }
        let channels = Int(Self.u16(bytes, at: start + 2))
        let rate = Int(Self.u32(bytes, at: start + 4))
        let blockAlign = Int(Self.u16(bytes, at: start + 12))
        let bits = Int(Self.u16(bytes, at: start + 14))
        guard channels > 0 else { throw AudioPlayerError.noChannels(url) }
        guard rate > 0 else { throw AudioPlayerError.noSampleRate(url) }
        let isFloat = tag == 3
        guard isFloat ? bits == 32 : [8, 16, 24, 32].contains(bits) else {
            throw AudioPlayerError.unsupportedSampleWidth(url, bitsPerSample: bits, isFloat: isFloat)
        }
        guard blockAlign == channels * bits / 8 else {
            throw AudioPlayerError.badBlockAlign(url, blockAlign: blockAlign, expected: channels * bits / 8)
        }
        guard let data = chunks.data else { throw AudioPlayerError.missingChunk(url, chunk: "data") }
        let present = bytes.count - data.start
        guard data.declared <= present else {
            throw AudioPlayerError.dataTruncated(url, present: present, declared: data.declared)
        }
        self.sampleRate = rate
        self.channels = channels
        self.encoding = isFloat ? .float32 : .integer(bits: bits)
        self.dataStart = data.start
        self.bytesPerFrame = blockAlign
        self.frameCount = data.declared / blockAlign
    }

    /// All the samples, interleaved, as signed 16-bit (in memory, so little-endian on every Linux machine Swift
    /// runs on). Holds the whole track in memory: players use ``int16Samples(frames:)`` a chunk at a time.
    public var int16Samples: [Int16] { int16Samples(frames: 0..<frameCount) }

    /// The samples of `frames` (clamped to the file), interleaved, converted to signed 16-bit: 8-bit is
    /// re-centred and widened, 24 and 32-bit keep their 16 most significant bits, float is clamped to -1...1 and
    /// scaled by 32767.
    public func int16Samples(frames: Range<Int>) -> [Int16] {
        let frames = frames.clamped(to: 0..<frameCount)
        let count = frames.count * channels
        let first = dataStart + frames.lowerBound * bytesPerFrame
        let encoding = self.encoding
        return [Int16](unsafeUninitializedCapacity: count) { out, initialized in
            bytes.withUnsafeBytes { raw in
                let source = UnsafeRawBufferPointer(rebasing: raw[first..<(first + frames.count * bytesPerFrame)])
                switch encoding {
                case .integer(bits: 8):
                    for i in 0..<count { out[i] = Int16(Int(source[i]) - 128) << 8 }
                case .integer(bits: 16):
                    for i in 0..<count {
                        out[i] = Int16(littleEndian: source.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self))
                    }
                case .integer(let bits):
                    // 24 and 32 bits: the two most significant bytes are the last two of each little-endian sample.
                    let width = bits / 8
                    for i in 0..<count {
                        let high = i * width + width - 2
                        out[i] = Int16(bitPattern: UInt16(source[high]) | UInt16(source[high + 1]) << 8)
                    }
                case .float32:
                    for i in 0..<count {
                        let bits = UInt32(littleEndian: source.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))
                        out[i] = Self.int16(Float(bitPattern: bits))
                    }
                }
            }
            initialized = count
        }
    }

    /// A float sample as 16-bit: clamped (over-range floats are common in mixes), NaN as silence.
    static func int16(_ value: Float) -> Int16 {
        guard !value.isNaN else { return 0 }
        return Int16((min(max(value, -1), 1) * 32767).rounded())
    }

    /// Where the "fmt " chunk's body is, and where the "data" chunk's body starts with its declared size; other
    /// chunks are skipped. The order of the two does not matter (a few writers put "data" first).
    private static func chunks(_ bytes: Data) -> (format: Range<Int>?, data: (start: Int, declared: Int)?) {
        var format: Range<Int>?
        var data: (start: Int, declared: Int)?
        var offset = 12
        while offset + 8 <= bytes.count, format == nil || data == nil {
            let id = fourCC(bytes, at: offset)
            var size = Int(u32(bytes, at: offset + 4))
            let body = offset + 8
            if id == "fmt " {
                format = body..<min(body + size, bytes.count)
            } else if id == "data" {
                // 0xFFFFFFFF is what a writer that streamed the file leaves when it could not go back: "to the end".
                if size == 0xFFFF_FFFF { size = bytes.count - body }
                data = (body, size)
            }
            offset = body + size + (size & 1)  // chunks are padded to an even length
        }
        return (format, data)
    }

    /// The usual name of a WAVE format code, for messages.
    static func formatName(_ tag: Int) -> String {
        switch tag {
        case 0x0002: "Microsoft ADPCM"
        case 0x0006: "A-law"
        case 0x0007: "µ-law"
        case 0x0011: "IMA ADPCM"
        case 0x0031: "GSM 6.10"
        case 0x0050: "MPEG"
        case 0x0055: "MP3"
        case 0x0161, 0x0162, 0x0163: "Windows Media Audio"
        case 0x2000: "AC-3"
        case 0x674F, 0x6750, 0x6751: "Ogg Vorbis"
        case 0xF1AC: "FLAC"
        default: "compressed or unknown"
        }
    }

    /// Four bytes at `offset` as text (a chunk id), with unprintable bytes as "?".
    private static func fourCC(_ bytes: Data, at offset: Int) -> String {
        String(decoding: bytes[offset..<(offset + 4)].map { (32...126).contains($0) ? $0 : 63 }, as: UTF8.self)
    }

    /// The little-endian 16-bit number at `offset`.
    private static func u16(_ bytes: Data, at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// The little-endian 32-bit number at `offset`.
    private static func u32(_ bytes: Data, at offset: Int) -> UInt32 {
        UInt32(u16(bytes, at: offset)) | UInt32(u16(bytes, at: offset + 2)) << 16
    }
}
