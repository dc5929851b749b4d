/// libFuzzer's entry point for the `modes` target. Each input is one Varlink message, as an app's `io.offstage.Modes`
/// call would be: decoded and taken through the wire types into a real `OffstageCore`, the way `ModesService` takes it.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/ModesFuzzChecks.swift` (and `InterfaceFuzzSupport.swift`),
/// shared with the regression tests; a broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try ModesFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("modes: \(error)")
    }
    return 0
}
