/// libFuzzer's entry point for the `transfers-control` target. Each input is one Varlink message, as the CLI's `io.offstage.TransfersControl`
/// call would be: decoded and taken through the wire types into a real `OffstageCore`, the way `TransfersControlService` takes it.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/TransfersControlFuzzChecks.swift` (and `InterfaceFuzzSupport.swift`),
/// shared with the regression tests; a broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try TransfersControlFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("transfers-control: \(error)")
    }
    return 0
}
