/// libFuzzer's entry point for the `modes-control` target. Each input is one Varlink message, as the CLI's `io.offstage.ModesControl`
/// call would be: decoded and taken through the wire types into a real `OffstageCore`, the way `ModesControlService` takes it.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/ModesControlFuzzChecks.swift` (and `InterfaceFuzzSupport.swift`),
/// shared with the regression tests; a broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try ModesControlFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("modes-control: \(error)")
    }
    return 0
}
