import Foundation
import NIOCore
import OffstageCore
import OffstageHost
import OffstageProtocol

/// `io.offstage.Transfers`: the calls an app's SDK makes for background transfers (SPEC §5). The app is the one that
/// owns the calling process (peer credentials): it opens, sees and changes only its own sessions and tasks.
struct TransfersService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(TransfersInterface.definition)
    }

    static let interface = TransfersInterface.name

    var methods: [String: VarlinkMethodHandler] {
        let calls = engine.transferCalls
        var methods = engine.hostMethods(TransferCalls.methods, in: Self.interface, answer: calls.answer)
        methods["CreateTask"] = { context, request, responder in
            let parameters = try request.decodeParameters(TransfersInterface.CreateTaskParameters.self)
            let (id, pid) = try engine.requireApp(context, in: Self.interface)
            let request = try TransferCalls.request(parameters)
            guard request.kind == .upload, let file = parameters.file else {
                responder.reply(try engine.createTransfer(request, session: parameters.session, caller: AppCaller(app: id, pid: pid)))
                return
            }
            // The upload's file, checked to be the app's, is linked (or copied, off the loop) into the daemon's
            // spool before the task exists.
            let source = try engine.uploadSource(file, of: id)
            let spool = engine.transferPaths.newUploadSpool(id)
            engine.spoolUpload(source, to: spool).whenComplete { result in
                do {
                    try result.get()
                    var spooled = request
                    spooled.uploadFile = spool
                    responder.reply(try engine.createTransfer(spooled, session: parameters.session, caller: AppCaller(app: id, pid: pid)))
                } catch let error as VarlinkError {
                    unlink(spool)
                    responder.fail(error)
                } catch {
                    unlink(spool)
                    responder.fail(
                        CoreError(
                            .invalidArgument, "the upload's file \(QuotedText.quote(file)) cannot be read: \(error)",
                            fix: "give a readable regular file in the app's data folder"
                        ).varlink(in: Self.interface))
                }
            }
        }
        return methods
    }
}

extension DaemonEngine {
    /// Runs one transfer input of the core and applies its actions; a refusal is the interface's error.
    func transferCall(in interface: String, _ body: (Instant) throws(CoreError) -> [CoreAction]) throws(VarlinkError) {
        do throws(CoreError) {
            apply(try body(now))
        } catch {
            throw error.varlink(in: interface)
        }
    }

    /// The calls of `io.offstage.Transfers` answered as every shell answers them, with finished downloads handed over
    /// in the app's data folder.
    var transferCalls: TransferCalls {
        let paths = transferPaths
        return TransferCalls(handedOver: { paths.handedOver($0) })
    }

    /// Creates the task (journaled before the reply) and answers with it.
    func createTransfer(_ request: TransferRequest, session: String, caller: AppCaller) throws(VarlinkError) -> TransfersInterface.CreateTaskReply {
        let (reply, actions) = try transferCalls.create(request, session: session, caller: caller, core: &core, at: now)
        apply(actions)
        return reply
    }

    /// The upload's file as the app named it, resolved: a regular file inside the app's data folder, or
    /// `InvalidArgument` naming it (``TransfersInterface/uploadSource(_:dataFolder:)``).
    func uploadSource(_ file: String, of id: AppID) throws(VarlinkError) -> String {
        do throws(CoreError) {
            return try TransfersInterface.uploadSource(file, dataFolder: paths.data(id))
        } catch {
            throw error.varlink(in: TransfersInterface.name)
        }
    }

    /// Puts a link to `source` at `spool` (the same file system), or a copy made off the loop.
    func spoolUpload(_ source: String, to spool: String) -> EventLoopFuture<Void> {
        do {
            try FileManager.default.createDirectory(
                atPath: (spool as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        if link(source, spool) == 0 { return eventLoop.makeSucceededVoidFuture() }
        return threadPool.runIfActive(eventLoop: eventLoop) {
            try FileManager.default.copyItem(atPath: source, toPath: spool)
        }
    }
}
