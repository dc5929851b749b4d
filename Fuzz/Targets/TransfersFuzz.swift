/// libFuzzer's entry point for the `transfers` target. Each input is one Varlink message, as an app's call would be:
/// decoded and taken through the wire types into a real `OffstageCore`, the way the daemon takes it.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/TransfersFuzzChecks.swift`, shared with the regression tests; a
/// broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try TransfersFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("transfers: \(error)")
    }
    return 0
}
