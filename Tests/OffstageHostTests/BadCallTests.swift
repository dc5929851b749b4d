import Foundation
import OffstageCore
import OffstageHost
import OffstageProtocol
import Testing

/// The answers every shell (the daemon, the test kit) gives an app's calls, fed calls with bad parameters as their
/// wire text: each is refused with the error that names what is wrong, and the core is left as it was.
@Suite("Shared answers to apps' calls: bad input (SPEC §7, §5, NT-4)")
struct BadCallTests {
    static let app = AppID("com.example.caller")
    static let now = Instant(secondsSinceEpoch: 1_767_600_000)

    /// A core with the app installed and not running.
    static func core() throws -> OffstageCore {
        var core = OffstageCore()
        _ = try core.install(
            InstalledApp(manifest: Manifest(id: app, executable: "app"), bundlePath: "/x", installedAt: now), at: now)
        return core
    }

    /// The error `answer` gives `method` with `parameters` (JSON text), and whether the core changed.
    static func refusal(
        _ interface: String, _ method: String, _ parameters: String,
        _ answer: (String, VarlinkReceivedCall, AppCaller, inout OffstageCore, Instant) throws(VarlinkError) -> HostAnswer
    ) throws -> (error: String?, message: String, changed: Bool) {
        var core = try core()
        let (apps, transfers, audio) = (core.apps, core.transfers, core.modes.audio)
        let call = try VarlinkCodec.decodeCall(Data(#"{"method":"\#(interface).\#(method)","parameters":\#(parameters)}"#.utf8))
        do throws(VarlinkError) {
            _ = try answer(method, call, AppCaller(app: app, pid: 4242), &core, now)
            return (nil, "", false)
        } catch {
            let changed = core.apps != apps || core.transfers != transfers || core.modes.audio != audio
            return (error.name, "\(error)", changed)
        }
    }

    @Test("MODE-1, MODE-3: a mode call with a parameter of the wrong type is InvalidParameter; a bad value is InvalidArgument naming it; a process that is not the app's running one is AppNotRunning")
    func modeCalls() throws {
        let playing = try Self.refusal(ModesInterface.name, "SetAudioPlaying", #"{"playing":"yes"}"#, ModeCalls.answer)
        #expect(playing.error == "org.varlink.service.InvalidParameter" && !playing.changed)
        let category = try Self.refusal(
            ModesInterface.name, "SetAudioSession", #"{"session":{"category":"loud","mixWithOthers":false,"active":true}}"#,
            ModeCalls.answer)
        #expect(category.error == "io.offstage.Modes.InvalidArgument" && category.message.contains("loud"), "\(category)")
        #expect(!category.changed)
        let notRunning = try Self.refusal(ModesInterface.name, "SetAudioPlaying", #"{"playing":true}"#, ModeCalls.answer)
        #expect(notRunning.error == "io.offstage.Modes.AppNotRunning" && !notRunning.changed, "\(notRunning)")
        let location = try Self.refusal(ModesInterface.name, "StartUpdatingLocation", #"{"desiredAccuracy":"near"}"#, ModeCalls.answer)
        #expect(location.error == "org.varlink.service.InvalidParameter" && !location.changed)
        let unknown = try Self.refusal(ModesInterface.name, "Levitate", "{}", ModeCalls.answer)
        #expect(unknown.error == "org.varlink.service.MethodNotFound")
    }

    @Test("TR-1: a transfer call with a bad change, a missing session or a bad kind is refused naming it, and nothing is created")
    func transferCalls() throws {
        let calls = TransferCalls(handedOver: { "/data/\($0.id)" })
        let change = try Self.refusal(TransfersInterface.name, "ChangeTask", #"{"id":1,"change":"explode"}"#, calls.answer)
        #expect(change.error == "io.offstage.Transfers.InvalidArgument" && change.message.contains("explode") && !change.changed)
        let tasks = try Self.refusal(TransfersInterface.name, "Tasks", "{}", calls.answer)
        #expect(tasks.error == "org.varlink.service.InvalidParameter" && !tasks.changed)
        let parameters = TransfersInterface.CreateTaskParameters(session: "s", kind: "sideways", url: "https://example.com/f")
        #expect {
            try TransferCalls.request(parameters)
        } throws: { error in
            (error as? VarlinkError)?.name == "io.offstage.Transfers.InvalidArgument" && "\(error)".contains("sideways")
        }
    }

    @Test("NT-4: completing a remote notification with a result that is not a handler's is InvalidArgument naming it")
    func pushCalls() throws {
        let result = try Self.refusal(PushInterface.name, "CompleteRemoteNotification", #"{"run":1,"result":"maybe"}"#, PushCalls.answer)
        #expect(result.error == "io.offstage.Push.InvalidArgument" && result.message.contains("maybe") && !result.changed)
    }
}
