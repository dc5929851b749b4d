import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Sound to the machine's sound server — PulseAudio, or PipeWire through its PulseAudio socket — with
/// libpulse-simple, loaded at run time so the SDK has no build-time or link-time dependency on libpulse.
///
/// The server is the one libpulse finds by itself: `PULSE_SERVER` if set, else its default (client.conf, then
/// `$XDG_RUNTIME_DIR/pulse/native`, then the system socket). The stream plays to the server's default sink, or
/// `PULSE_SINK`. The server keeps a small buffer, ``defaultTargetLatency`` unless the environment variable
/// `OFFSTAGE_AUDIO_BUFFER_MS` says otherwise (20…2000), so that a pause, which drops that buffer, is heard at once.
final class PulseAudioOutput: AudioOutput {
    /// `pa_sample_spec`: { pa_sample_format_t format (a C enum, 32 bits); uint32_t rate; uint8_t channels },
    /// 12 bytes with padding. Swift lays out a struct of plain fields in order with C alignment (checked by a test).
    struct SampleSpec {
        /// PA_SAMPLE_S16LE is 3.
        var format: Int32
        /// Frames per second.
        var rate: UInt32
        /// Samples per frame.
        var channels: UInt8
    }

    /// `pa_buffer_attr`: five uint32_t in this order; UInt32.max means "the server's default".
    struct BufferAttributes {
        /// Most bytes the server buffers.
        var maxlength: UInt32
        /// Target bytes buffered for playback: the latency we ask for.
        var tlength: UInt32
        /// Bytes buffered before playback starts.
        var prebuf: UInt32
        /// Least bytes the server asks for at a time.
        var minreq: UInt32
        /// Recording only.
        var fragsize: UInt32
    }

    /// The buffer the server keeps by default: 100 ms, so pause and seek are prompt and a 20 ms write rarely waits.
    static let defaultTargetLatency: TimeInterval = 0.1
    /// The environment variable that sets the buffer in milliseconds.
    static let bufferEnvironmentVariable = "OFFSTAGE_AUDIO_BUFFER_MS"

    /// The libpulse-simple functions, found once per process; nil when the libraries are missing.
    private static let library: Library? = Library()

    /// The libpulse functions used, as C function pointers.
    private struct Library: @unchecked Sendable {  // immutable C function pointers and dlopen handles
        typealias New = @convention(c) (
            UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeMutablePointer<Int32>?
        ) -> OpaquePointer?
        typealias Write = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeMutablePointer<Int32>?) -> Int32
        typealias Simple = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?) -> Int32
        typealias Latency = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?) -> UInt64
        typealias Free = @convention(c) (OpaquePointer?) -> Void
        typealias StrError = @convention(c) (Int32) -> UnsafePointer<CChar>?

        let new: New
        let write: Write
        let flush: Simple
        let drain: Simple
        let latency: Latency
        let free: Free
        let strerror: StrError

        /// Loads libpulse-simple.so.0 and libpulse.so.0 (the runtime names, present without the -dev package).
        init?() {
            guard let simple = dlopen("libpulse-simple.so.0", RTLD_NOW | RTLD_LOCAL),
                let pulse = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL)
            else { return nil }
            /// A symbol as a function pointer of type `T`, or nil.
            func symbol<T>(_ handle: UnsafeMutableRawPointer, _ name: String, as: T.Type) -> T? {
                dlsym(handle, name).map { unsafeBitCast($0, to: T.self) }
            }
            guard let new = symbol(simple, "pa_simple_new", as: New.self),
                let write = symbol(simple, "pa_simple_write", as: Write.self),
                let flush = symbol(simple, "pa_simple_flush", as: Simple.self),
                let drain = symbol(simple, "pa_simple_drain", as: Simple.self),
                let latency = symbol(simple, "pa_simple_get_latency", as: Latency.self),
                let free = symbol(simple, "pa_simple_free", as: Free.self),
                let strerror = symbol(pulse, "pa_strerror", as: StrError.self)
            else { return nil }
            (self.new, self.write, self.flush, self.drain) = (new, write, flush, drain)
            (self.latency, self.free, self.strerror) = (latency, free, strerror)
        }

        /// libpulse's message for an error code.
        func message(_ code: Int32) -> String { strerror(code).map { String(cString: $0) } ?? "error \(code)" }
    }

    /// The stream (a `pa_simple *`); nil once closed.
    private var stream: OpaquePointer?
    /// The functions.
    private let library: Library
    /// Samples per frame.
    private let channels: Int
    /// Frames per second.
    private let sampleRate: Int
    /// Where the sound goes, for ``description``.
    let description: String
    /// Connects a playback stream of signed 16-bit little-endian samples; throws
    /// ``AudioPlayerError/outputFailed(output:reason:)`` if libpulse is missing or the server cannot be reached, so
    /// the caller falls back to another output. `targetLatency` nil is ``configuredTargetLatency()``.
    init(sampleRate: Int, channels: Int, streamName: String, targetLatency: TimeInterval? = nil) throws(AudioPlayerError) {
        guard let library = Self.library else {
            throw .outputFailed(output: "PulseAudio", reason: "libpulse-simple.so.0 could not be loaded")
        }
        guard (1...255).contains(channels), (1...768_000).contains(sampleRate) else {
            throw .outputFailed(
                output: "PulseAudio", reason: "\(channels) channels at \(sampleRate) Hz are beyond PulseAudio's limits")
        }
        let latency = targetLatency ?? Self.configuredTargetLatency()
        // A whole number of frames: the server rejects a buffer size that is not a multiple of the frame size.
        let targetBytes = UInt32(max(1, Int(Double(sampleRate) * latency)) * channels * 2)
        var spec = SampleSpec(format: 3, rate: UInt32(sampleRate), channels: UInt8(channels))
        var attributes = BufferAttributes(
            maxlength: .max, tlength: targetBytes, prebuf: .max, minreq: .max, fragsize: .max)
        var error: Int32 = 0
        let application = ProcessInfo.processInfo.processName
        let stream = withUnsafePointer(to: &spec) { spec in
            withUnsafePointer(to: &attributes) { attributes in
                // Server nil: libpulse reads PULSE_SERVER and its configuration itself. Device nil: PULSE_SINK or default.
                library.new(nil, application, 1 /* PA_STREAM_PLAYBACK */, nil, streamName, spec, nil, attributes, &error)
            }
        }
        guard let stream else {
            throw .outputFailed(output: "PulseAudio at \(Self.serverName())", reason: library.message(error))
        }
        self.stream = stream
        self.library = library
        self.channels = channels
        self.sampleRate = sampleRate
        let sink = ProcessInfo.processInfo.environment["PULSE_SINK"] ?? "default"
        self.description = "PulseAudio at \(Self.serverName()) (sink \(sink))"
    }

    /// The server libpulse will use, as far as we can tell without asking it.
    private static func serverName() -> String {
        let environment = ProcessInfo.processInfo.environment
        if let server = environment["PULSE_SERVER"], !server.isEmpty { return server }
        if let runtime = environment["XDG_RUNTIME_DIR"] { return "unix:\(runtime)/pulse/native" }
        return "the default server"
    }

    /// The target buffer from `OFFSTAGE_AUDIO_BUFFER_MS` when valid, else ``defaultTargetLatency``.
    static func configuredTargetLatency() -> TimeInterval {
        guard let text = ProcessInfo.processInfo.environment[bufferEnvironmentVariable], let milliseconds = Int(text),
            (20...2000).contains(milliseconds)
        else { return defaultTargetLatency }
        return TimeInterval(milliseconds) / 1000
    }

    /// Blocks until the server has room for `samples`, then hands them over.
    func write(_ samples: [Int16]) throws(AudioPlayerError) {
        guard let stream else { throw AudioPlayerError.outputFailed(output: description, reason: "the stream is closed") }
        var error: Int32 = 0
        let result = samples.withUnsafeBytes { library.write(stream, $0.baseAddress, $0.count, &error) }
        if result < 0 { throw AudioPlayerError.outputFailed(output: description, reason: library.message(error)) }
    }

    /// Drops what the server has buffered but not yet played.
    func flush() {
        guard let stream else { return }
        var error: Int32 = 0
        _ = library.flush(stream, &error)  // a failed flush only means a little old audio is heard: nothing to do
    }

    /// Waits until the server has played everything written.
    func drain() {
        guard let stream else { return }
        var error: Int32 = 0
        _ = library.drain(stream, &error)
    }

    /// What the server has buffered and the sink's own delay, as libpulse reports them.
    var latency: TimeInterval {
        guard let stream else { return 0 }
        var error: Int32 = 0
        let microseconds = library.latency(stream, &error)
        return error == 0 && microseconds != .max ? TimeInterval(microseconds) / 1_000_000 : 0
    }

    /// Disconnects the stream.
    func close() {
        if let stream { library.free(stream) }
        stream = nil
    }

    /// Closes the stream if the player did not.
    deinit { close() }
}
