/// libFuzzer's entry point for the `hand-off` target. Each input is one Varlink message, as an app's hand-off socket
/// call would be: decoded and taken through the wire types into a real `OffstageCore`, the way `SocketHandOffServer` and `HandedOffChannels` takes it.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/HandOffFuzzChecks.swift` (and `InterfaceFuzzSupport.swift`),
/// shared with the regression tests; a broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try HandOffFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("hand-off: \(error)")
    }
    return 0
}
