import Foundation
import OffstageCore

/// Where the daemon keeps transfers' bytes: the part files of downloads and the spooled files of uploads under the
/// state directory (apps never see them), and finished downloads in each app's own folder (SPEC TR-1).
struct TransferPaths: Sendable {
    /// The state directory.
    let root: String

    /// The daemon's folder for the app's transfers.
    func spool(_ app: AppID) -> String { root + "/transfers/" + app.rawValue }
    /// A download's bytes until it is complete.
    func partFile(_ task: TransferTask) -> String { spool(task.app) + "/\(task.id).part" }
    /// The folder finished downloads are handed over in: inside the app's data folder.
    func handOverFolder(_ app: AppID) -> String { root + "/data/" + app.rawValue + "/Transfers" }
    /// Where a finished download is handed to the app: its id keeps two downloads of one name apart.
    func handedOver(_ task: TransferTask) -> String { handOverFolder(task.app) + "/\(task.id)-\(task.request.filename)" }
    /// A new name for an upload's spooled file.
    func newUploadSpool(_ app: AppID) -> String { spool(app) + "/upload-\(UUID().uuidString.lowercased())" }
}
