import Foundation
import OffstageCore
import OffstageHost
import OffstageProtocol

/// Background transfers on the test device (SPEC §5): the kit keeps files where the daemon keeps them — a finished
/// download is handed to the app in `Transfers/` of its data folder, an upload's file is copied out of the app's
/// reach before the task exists — and the test's server (``TestDevice/respond(to:with:)``) answers the requests.
extension KitHost {
    /// Where a finished download is handed to its app: `Transfers/<task id>-<name>` in the app's data folder, as the
    /// daemon names it.
    static func handedOver(_ task: TransferTask, in folder: URL) -> String {
        folder.appendingPathComponent(task.app.rawValue).appendingPathComponent("Transfers").path
            + "/\(task.id)-\(task.request.filename)"
    }

    /// The folder the kit keeps uploads' files in, out of the apps' data folders.
    static func spool(in folder: URL) -> URL { folder.appendingPathComponent("transfers", isDirectory: true) }

    /// `CreateTask`, as the daemon answers it: an upload's file, checked to be a regular file in the app's data folder,
    /// is copied into the spool first (the app may change or delete its own at once).
    func createTransfer(_ call: VarlinkReceivedCall, caller: AppCaller, _ state: inout State) throws(VarlinkError) -> any Encodable & Sendable {
        let parameters = try call.decodeParameters(as: TransfersInterface.CreateTaskParameters.self)
        var request = try TransferCalls.request(parameters)
        var spooled: String?
        if request.kind == .upload, let file = parameters.file {
            let data = folder.appendingPathComponent(caller.app.rawValue).path
            let source: String
            do throws(CoreError) {
                source = try TransfersInterface.uploadSource(file, dataFolder: data)
            } catch {
                throw error.varlink(in: TransfersInterface.name)
            }
            let spool = Self.spool(in: folder).appendingPathComponent("upload-\(UUID().uuidString.lowercased())").path
            do {
                try FileManager.default.createDirectory(at: Self.spool(in: folder), withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: source, toPath: spool)
            } catch {
                throw CoreError(
                    .invalidArgument, "the upload's file \(QuotedText.quote(file)) cannot be read: \(error)",
                    fix: "give a readable regular file in the app's data folder"
                ).varlink(in: TransfersInterface.name)
            }
            request.uploadFile = spool
            spooled = spool
            let size = (try? FileManager.default.attributesOfItem(atPath: spool)[.size] as? Int64) ?? nil
            state.simulation.uploadSizes[spool] = size ?? 0
        }
        let now = state.simulation.now
        do {
            return try state.simulation.callCore { core in
                try transfers.create(request, session: parameters.session, caller: caller, core: &core, at: now)
            }
        } catch {
            if let spooled {
                unlink(spooled)
                state.simulation.uploadSizes[spooled] = nil
            }
            throw error as? VarlinkError
                ?? VarlinkError("io.offstage.Protocol.InternalError", parameters: ["message": .string("\(error)")])
        }
    }

    /// A download completed: its file, the server's body, is handed to the app.
    func handOver(_ task: TransferTask, body: Data?) {
        let path = Self.handedOver(task, in: folder)
        do {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try (body ?? Data()).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            with { $0.warnings.append("the finished download of task \(task.id) could not be written to \(path): \(error)") }
        }
    }

    /// The system forgot `task`: the file it handed over, if the app left it there, and its upload's copy go.
    func removeFiles(of task: TransferTask) {
        unlink(Self.handedOver(task, in: folder))
        if let upload = task.request.uploadFile, upload.hasPrefix(Self.spool(in: folder).path + "/") { unlink(upload) }
    }
}
