/// libFuzzer's entry point for the `varlink-framing` target. The first three bytes of an input set the message size
/// limit and how the stream is cut into reads; the rest is the byte stream `VarlinkFraming` reassembles.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/VarlinkFuzzChecks.swift`, shared with the regression
/// tests; a broken one stops the run with its description, so libFuzzer keeps the input (see `scripts/fuzz`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try VarlinkFuzzChecks.checkFraming(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("varlink-framing: \(error)")
    }
    return 0
}
