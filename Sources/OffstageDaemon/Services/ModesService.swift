import OffstageCore
import OffstageHost
import OffstageProtocol

/// `io.offstage.Modes`: the calls an app's SDK makes for its long-running background modes (SPEC §7). The app is the
/// one that owns the calling process.
struct ModesService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(ModesInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        // HandOffSocket is served on the hand-off socket (descriptors cannot pass here): see `HandedOffChannels`.
        engine.hostMethods(ModeCalls.methods, in: ModesInterface.name, answer: ModeCalls.answer)
            .merging(accessoryMethods) { first, _ in first }
    }
}

extension DaemonEngine {
    /// Runs a core call for an app's modes, turning its error into the modes interface's error.
    func modesCall<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
        try ModeCalls.refusing(body)
    }
}
