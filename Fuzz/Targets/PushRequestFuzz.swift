/// libFuzzer's entry point for the `push-request` target. Each input is one provider API request (method, path,
/// headers, body), framed as text, or a payload alone under a valid head: validated by the push gateway's
/// `APNsRequestRules` and `PayloadParser` (the sources of `Sources/OffstagePush/APNs`, compiled in).
///
/// The properties live in `Tests/OffstagePushTests/Fuzz/PushRequestFuzzChecks.swift`, shared with the regression
/// tests; a broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try PushRequestFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("push-request: \(error)")
    }
    return 0
}
