/// libFuzzer's entry point for the `varlink-codec` target. Each input is one Varlink message (JSON text without its
/// NUL), decoded by `VarlinkCodec` as a call and as a reply, and as a `JSONValue`.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/VarlinkFuzzChecks.swift`, shared with the regression
/// tests; a broken one stops the run with its description, so libFuzzer keeps the input (see `scripts/fuzz`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try VarlinkFuzzChecks.checkCodec(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("varlink-codec: \(error)")
    }
    return 0
}
