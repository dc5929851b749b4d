/// libFuzzer's entry point for the `notification-add` target. Each input is one Varlink message, as an app's
/// `io.offstage.Notifications.Add` call: decoded, added to a core, fired, and listed as the user would list it.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/NotificationFuzzChecks.swift`, shared with the
/// regression tests; a broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try NotificationFuzzChecks.checkAdd(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("notification-add: \(error)")
    }
    return 0
}
