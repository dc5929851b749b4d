/// libFuzzer's entry point for the `json-envelope` target. Each input is JSON text (or not) for
/// `JSONEnvelopeScanner`, whose verdict and members are compared with Foundation's full parse.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/VarlinkFuzzChecks.swift`, shared with the regression
/// tests; a broken one stops the run with its description, so libFuzzer keeps the input (see `scripts/fuzz`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try VarlinkFuzzChecks.checkEnvelopeScanner(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("json-envelope: \(error)")
    }
    return 0
}
