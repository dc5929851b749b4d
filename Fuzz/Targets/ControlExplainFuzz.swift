/// libFuzzer's entry point for the `control-explain` target. Each input is one Varlink message, as the CLI's `io.offstage.Control` scheduling and explain
/// call would be: decoded and taken through the wire types into a real `OffstageCore`, the way `ControlService` takes it.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/ControlExplainFuzzChecks.swift` (and `InterfaceFuzzSupport.swift`),
/// shared with the regression tests; a broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try ControlExplainFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("control-explain: \(error)")
    }
    return 0
}
