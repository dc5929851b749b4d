import Foundation

/// Why a sound file could not be played: each case names the file, what was wrong and how to fix it.
public enum AudioPlayerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read at all (missing, unreadable); `reason` is the system's message.
    case unreadable(URL, reason: String)
    /// The file does not start with a RIFF header, so it is not a WAV file.
    case notRIFF(URL)
    /// The file is a RIFF file of another kind (`form` is its four-letter type, e.g. "AVI ").
    case notWAVE(URL, form: String)
    /// A chunk every WAV file needs ("fmt " or "data") is missing.
    case missingChunk(URL, chunk: String)
    /// The "fmt " chunk is shorter than the 16 bytes every format chunk has.
    case formatChunkTooShort(URL, bytes: Int)
    /// The samples are compressed (`format` is the WAVE format code, `name` its usual name).
    case notPCM(URL, format: Int, name: String)
    /// PCM or float samples of a width this player does not read.
    case unsupportedSampleWidth(URL, bitsPerSample: Int, isFloat: Bool)
    /// The format declares no channels.
    case noChannels(URL)
    /// The format declares a sample rate of zero.
    case noSampleRate(URL)
    /// The declared bytes per frame do not match channels × bytes per sample.
    case badBlockAlign(URL, blockAlign: Int, expected: Int)
    /// The "data" chunk declares more bytes than the file holds.
    case dataTruncated(URL, present: Int, declared: Int)
    /// The sound output failed while playing (the sound server went away, for instance).
    case outputFailed(output: String, reason: String)

    /// The file's name as shown in messages: its path.
    private static func name(_ url: URL) -> String { url.isFileURL ? url.path : url.absoluteString }

    /// What went wrong, with the file's name and the fix.
    public var description: String {
        /// The advice for every "this is not a format we read" case: sox converts almost anything.
        let convert = "convert it to 16-bit PCM WAV, e.g. `sox in.ext -e signed -b 16 out.wav`"
        switch self {
        case .unreadable(let url, let reason):
            return "\(Self.name(url)): cannot read the file: \(reason); check the path and its permissions"
        case .notRIFF(let url):
            return "\(Self.name(url)): not a RIFF file (no \"RIFF\" header); the player reads WAV files only: \(convert)"
        case .notWAVE(let url, let form):
            return "\(Self.name(url)): a RIFF file of type \"\(form)\", not \"WAVE\"; \(convert)"
        case .missingChunk(let url, let chunk):
            return "\(Self.name(url)): no \"\(chunk)\" chunk, so the file is damaged or incomplete; \(convert)"
        case .formatChunkTooShort(let url, let bytes):
            return "\(Self.name(url)): the \"fmt \" chunk has \(bytes) bytes, fewer than 16; the file is damaged; \(convert)"
        case .notPCM(let url, let format, let name):
            return "\(Self.name(url)): format \(format) (\(name)) is not PCM; \(convert)"
        case .unsupportedSampleWidth(let url, let bits, let isFloat):
            let kind = isFloat ? "IEEE float" : "PCM integer"
            let readable = isFloat ? "32-bit float" : "8, 16, 24 or 32-bit integer"
            return "\(Self.name(url)): \(kind) samples of \(bits) bits are not supported (only \(readable)); \(convert)"
        case .noChannels(let url):
            return "\(Self.name(url)): the format declares 0 channels; the file is damaged; \(convert)"
        case .noSampleRate(let url):
            return "\(Self.name(url)): the format declares a sample rate of 0 Hz; the file is damaged; \(convert)"
        case .badBlockAlign(let url, let blockAlign, let expected):
            return "\(Self.name(url)): \(blockAlign) bytes per frame declared, \(expected) expected from the channels "
                + "and sample width; the file is damaged; \(convert)"
        case .dataTruncated(let url, let present, let declared):
            return "\(Self.name(url)): data chunk truncated: \(present) of \(declared) bytes; "
                + "the file was cut short (an interrupted copy or download?): copy it again or re-export it"
        case .outputFailed(let output, let reason):
            return "sound output \(output) failed: \(reason); check that the sound server is running, "
                + "or set OFFSTAGE_AUDIO_OUTPUT=null to play silently"
        }
    }
}
