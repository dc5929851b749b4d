import Foundation
import OffstageCore

/// What an app's `io.offstage.Transfers` call asks of the core, read from its parameters (SPEC TR-1, §11): the
/// conversions the daemon makes before the core decides, kept here, free of the daemon's I/O, so that the fuzz target
/// and the tests take exactly the daemon's path. Each refusal names the field and the fix.
extension TransfersInterface.CreateTaskParameters {
    /// The core's request; a bad kind, a file given with a download, an earliest begin date that is not a number of
    /// seconds an instant holds, or a URL the transfer engine cannot read is refused naming it. The core checks the rest (``OffstageCore/createTransfer(_:pid:session:request:at:)``).
    public func request() throws(CoreError) -> TransferRequest {
        guard let kind = TransferKind(rawValue: kind) else {
            throw CoreError(.invalidArgument, "kind \(QuotedText.quote(kind)) is not a transfer kind", fix: "use download or upload")
        }
        if kind == .download, file != nil {
            throw CoreError(.invalidArgument, "a download takes no file", fix: "give file only with an upload")
        }
        // Beyond ±292 years the nanosecond count of an Instant would overflow: such a date is a mistake anyway.
        let earliest = try earliestBegin.map { seconds throws(CoreError) in
            try CoreError.checking { () throws(NumberOutOfRange) in
                try CheckedNumber.instant(secondsSinceEpoch: seconds, field: "earliestBegin")
            }
        }
        // The transfer engine reads the URL with Foundation and needs an http or https scheme and a host: a URL it cannot
        // read is refused now, not accepted to fail when it runs. The core checks the rest (spaces, length).
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = parsed.host, !host.isEmpty
        else {
            throw CoreError(
                .invalidArgument, "URL \(QuotedText.quote(url)) is not an http or https URL with a host",
                fix: "give an absolute URL such as https://example.com/file.zip")
        }
        return TransferRequest(
            kind: kind, url: url, method: method,
            headers: (headers ?? []).map { TransferHeader(name: $0.name, value: $0.value) },
            uploadFile: kind == .upload ? (file ?? "") : nil, discretionary: discretionary ?? false,
            earliestBegin: earliest, filename: filename ?? "")
    }
}

extension TransfersInterface {
    /// The change a `ChangeTask` call asks for, or `InvalidArgument` naming it.
    public static func change(_ text: String) throws(CoreError) -> TransferChange {
        guard let change = TransferChange(rawValue: text) else {
            throw CoreError(.invalidArgument, "change \(QuotedText.quote(text)) is not cancel, pause or resume", fix: "use cancel, pause or resume")
        }
        return change
    }

    /// The upload's file as the app named it, resolved (symbolic links followed): a regular file inside `dataFolder`,
    /// the app's data folder, or `InvalidArgument` naming it.
    public static func uploadSource(_ file: String, dataFolder folder: String) throws(CoreError) -> String {
        let refuse = { (why: String) -> CoreError in
            CoreError(
                .invalidArgument, "the upload's file \(QuotedText.quote(file)) \(why)",
                fix: "give a regular file inside the app's data folder (\(folder))")
        }
        guard file.hasPrefix("/"), let resolved = realpath(file, nil) else { throw refuse("does not exist or is not an absolute path") }
        defer { free(resolved) }
        let path = String(cString: resolved)
        let root = realpath(folder, nil).map { pointer in defer { free(pointer) }; return String(cString: pointer) } ?? folder
        guard path.hasPrefix(root + "/") else { throw refuse("is outside the app's data folder") }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw refuse("is not a regular file") }
        return path
    }
}
