import Foundation
import Testing

@testable import Offstage

/// The WAV reader behind AudioPlayer (SPEC MODE-1: an audio app must be able to play its sounds).
@Suite("WAV files (MODE-1)")
struct WAVFileTests {
    /// Where the test files go.
    let folder: TemporaryFolder

    init() throws { folder = try TemporaryFolder() }

    /// Writes `builder` and reads it back.
    func read(_ builder: WAVBuilder, name: String = "sound.wav") throws -> WAVFile {
        try WAVFile(contentsOf: builder.write(name, in: folder.url))
    }

    /// The error reading `builder` fails with; the test fails if it reads.
    func failure(_ builder: WAVBuilder, name: String) throws -> AudioPlayerError {
        let url = try builder.write(name, in: folder.url)
        do {
            _ = try WAVFile(contentsOf: url)
        } catch let error as AudioPlayerError {
            #expect(error.description.contains(url.path), "the message names the file: \(error)")
            return error
        }
        Issue.record("\(name) was read, an error was expected")
        return .notRIFF(url)
    }

    @Test("16-bit PCM is read as is, with rate, channels, frame count and duration")
    func pcm16() throws {
        let file = try read(.pcm16([0, 1000, -1000, 32767, -32768, 7], channels: 2, sampleRate: 22050))
        #expect(file.sampleRate == 22050)
        #expect(file.channels == 2)
        #expect(file.frameCount == 3)
        #expect(file.encoding == .integer(bits: 16))
        #expect(abs(file.duration - 3.0 / 22050) < 1e-12)
        #expect(file.int16Samples == [0, 1000, -1000, 32767, -32768, 7])
        #expect(file.int16Samples(frames: 1..<2) == [-1000, 32767])
        #expect(file.int16Samples(frames: 2..<10) == [-32768, 7], "a range past the end is clamped")
    }

    @Test("8-bit PCM, unsigned, is re-centred on zero and widened")
    func pcm8() throws {
        let file = try read(WAVBuilder(bits: 8, samples: [0, 128, 255, 64]))
        #expect(file.encoding == .integer(bits: 8))
        #expect(file.int16Samples == [-32768, 0, 32512, -16384])
    }

    @Test("24-bit PCM keeps its 16 most significant bits")
    func pcm24() throws {
        // 0x123456, -1 (0xFFFFFF), 0x800000 (most negative), 0x7FFFFF (most positive)
        let samples: [UInt8] = [0x56, 0x34, 0x12, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x80, 0xFF, 0xFF, 0x7F]
        let file = try read(WAVBuilder(bits: 24, samples: samples))
        #expect(file.int16Samples == [0x1234, -1, -32768, 32767])
    }

    @Test("32-bit integer PCM keeps its 16 most significant bits")
    func pcm32() throws {
        let values: [Int32] = [0x1234_5678, -65536, Int32.min, Int32.max]
        let file = try read(WAVBuilder(bits: 32, samples: values.flatMap { le($0) }))
        #expect(file.int16Samples == [0x1234, -1, -32768, 32767])
    }

    @Test("32-bit float is scaled by 32767, clamped, NaN silent")
    func float32() throws {
        let values: [Float] = [0, 1, -1, 0.5, 2, -3, .nan]
        let file = try read(WAVBuilder(format: 3, bits: 32, samples: values.flatMap { le($0.bitPattern) }))
        #expect(file.encoding == .float32)
        #expect(file.int16Samples == [0, 32767, -32767, 16384, 32767, -32767, 0])
    }

    @Test("WAVE_FORMAT_EXTENSIBLE is read by its sub-format (24-bit PCM and float)")
    func extensible() throws {
        let pcm = try read(WAVBuilder(format: 0xFFFE, channels: 2, bits: 24, samples: [0, 0, 0x40, 0, 0, 0xC0]))
        #expect(pcm.int16Samples == [16384, -16384])
        let float = try read(
            WAVBuilder(format: 0xFFFE, bits: 32, subformat: 3, samples: le(Float(-0.5).bitPattern)), name: "f.wav")
        #expect(float.int16Samples == [-16384])
    }

    @Test("Any channel count and sample rate: 3 channels at 11025 Hz")
    func channelsAndRate() throws {
        let file = try read(.pcm16([1, 2, 3, 4, 5, 6], channels: 3, sampleRate: 11025))
        #expect(file.channels == 3 && file.sampleRate == 11025 && file.frameCount == 2)
        #expect(file.int16Samples(frames: 1..<2) == [4, 5, 6])
    }

    @Test("Unknown chunks are skipped, odd-sized ones with their pad byte, and data may come before fmt")
    func unknownChunks() throws {
        var builder = WAVBuilder.pcm16([5, -5])
        builder.chunksBefore = [("JUNK", [1, 2, 3])]
        builder.chunksBetween = [("LIST", Array("INFOISFT".utf8) + [0]), ("fact", le(UInt32(2)))]
        #expect(try read(builder).int16Samples == [5, -5])
        builder.dataFirst = true
        #expect(try read(builder, name: "data-first.wav").int16Samples == [5, -5])
    }

    @Test("A partial frame at the end of the data is ignored")
    func partialFrame() throws {
        let builder = WAVBuilder.pcm16([1, 2, 3], channels: 2)  // 6 bytes: one 4-byte frame and half of one
        let file = try read(builder)
        #expect(file.frameCount == 1 && file.int16Samples == [1, 2])
    }

    @Test("A file that is not RIFF is refused, naming the file")
    func notRIFF() throws {
        let url = folder.url.appendingPathComponent("song.mp3")
        try Data("ID3\u{3}\0\0\0\0\0\0 some mp3 bytes".utf8).write(to: url)
        #expect(throws: AudioPlayerError.notRIFF(url)) { try WAVFile(contentsOf: url) }
        #expect(AudioPlayerError.notRIFF(url).description.contains("not a RIFF file"))
        #expect(AudioPlayerError.notRIFF(url).description.contains(url.path))
        #expect(AudioPlayerError.notRIFF(url).description.contains("sox"), "the message says how to fix it")
    }

    @Test("An empty file and a RIFF file of another type are refused")
    func emptyAndOtherRIFF() throws {
        let empty = folder.url.appendingPathComponent("empty.wav")
        try Data().write(to: empty)
        #expect(throws: AudioPlayerError.notRIFF(empty)) { try WAVFile(contentsOf: empty) }
        let avi = folder.url.appendingPathComponent("movie.avi")
        try Data(Array("RIFF".utf8) + le(UInt32(4)) + Array("AVI ".utf8)).write(to: avi)
        #expect(throws: AudioPlayerError.notWAVE(avi, form: "AVI ")) { try WAVFile(contentsOf: avi) }
    }

    @Test("A compressed format is refused by name: format 85 (MP3) is not PCM")
    func compressed() throws {
        let error = try failure(WAVBuilder(format: 85, samples: [1, 2]), name: "mp3-in-wav.wav")
        #expect(error.description.contains("format 85 (MP3) is not PCM"))
        let adpcm = try failure(WAVBuilder(format: 0xFFFE, subformat: 2, samples: [1, 2]), name: "adpcm.wav")
        #expect(adpcm.description.contains("format 2 (Microsoft ADPCM) is not PCM"))
    }

    @Test("Zero channels, a zero sample rate, an odd block size and unread widths are refused")
    func badFormats() throws {
        #expect(try failure(WAVBuilder(channels: 0, samples: [0, 0]), name: "mute.wav") == .noChannels(
            folder.url.appendingPathComponent("mute.wav")))
        #expect(try failure(WAVBuilder(sampleRate: 0, samples: [0, 0]), name: "rate.wav").description.contains("0 Hz"))
        let align = try failure(WAVBuilder(channels: 2, blockAlign: 3, samples: [0, 0, 0, 0]), name: "align.wav")
        #expect(align.description.contains("3 bytes per frame declared, 4 expected"))
        let twelve = try failure(WAVBuilder(bits: 12, blockAlign: 2, samples: [0, 0]), name: "twelve.wav")
        #expect(twelve.description.contains("PCM integer samples of 12 bits are not supported"))
        let double = try failure(WAVBuilder(format: 3, bits: 64, samples: [UInt8](repeating: 0, count: 8)), name: "d.wav")
        #expect(double.description.contains("IEEE float samples of 64 bits are not supported"))
    }

    @Test("A data chunk cut short is refused with how much is there: data chunk truncated: 1200 of 44100 bytes")
    func truncated() throws {
        var builder = WAVBuilder(samples: [UInt8](repeating: 0, count: 1200))
        builder.declaredDataSize = 44100
        let error = try failure(builder, name: "cut.wav")
        #expect(error.description.contains("data chunk truncated: 1200 of 44100 bytes"))
    }

    @Test("Missing fmt or data chunks and a short fmt chunk are refused")
    func missingChunks() throws {
        let noData = folder.url.appendingPathComponent("nodata.wav")
        let full = WAVBuilder.pcm16([1]).bytes
        // RIFF header + fmt chunk only (the data chunk is the last 10 bytes).
        try Data(full.prefix(full.count - 10)).write(to: noData)
        #expect(throws: AudioPlayerError.missingChunk(noData, chunk: "data")) { try WAVFile(contentsOf: noData) }
        let noFormat = folder.url.appendingPathComponent("nofmt.wav")
        try Data(Array("RIFF".utf8) + le(UInt32(14)) + Array("WAVEdata".utf8) + le(UInt32(2)) + [0, 0])
            .write(to: noFormat)
        #expect(throws: AudioPlayerError.missingChunk(noFormat, chunk: "fmt ")) { try WAVFile(contentsOf: noFormat) }
        let short = folder.url.appendingPathComponent("short.wav")
        try Data(Array("RIFF".utf8) + le(UInt32(16)) + Array("WAVEfmt ".utf8) + le(UInt32(4)) + [1, 0, 1, 0])
            .write(to: short)
        #expect(throws: AudioPlayerError.formatChunkTooShort(short, bytes: 4)) { try WAVFile(contentsOf: short) }
    }

    @Test("A missing file is refused with the system's reason and the path")
    func missingFile() throws {
        let url = folder.url.appendingPathComponent("nowhere.wav")
        #expect {
            try WAVFile(contentsOf: url)
        } throws: { error in
            guard case .unreadable(let failed, _) = error as? AudioPlayerError else { return false }
            return failed == url && "\(error)".contains(url.path)
        }
    }

    @Test("The example player's playlist reads: three tracks of 8 to 10 s, 22050 Hz mono 16-bit")
    func examplePlaylist() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Examples/Player/Playlist").standardized
        let tracks = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".wav") }
        #expect(tracks.sorted() == ["01-sunrise.wav", "02-tide.wav", "03-lanterns.wav"])
        for track in tracks {
            let file = try WAVFile(contentsOf: folder.appendingPathComponent(track))
            #expect(file.sampleRate == 22050 && file.channels == 1 && file.encoding == .integer(bits: 16))
            #expect((8...10).contains(file.duration), "\(track): \(file.duration) s")
            #expect(file.int16Samples.contains { abs(Int($0)) > 8000 }, "\(track) is not silent")
        }
    }
}
