/// What an app may ask of background transfers (SPEC TR-1, bad input): session identifiers, URLs, methods, headers,
/// file names and dates, each refused naming what is wrong and the fix.
extension OffstageCore {
    static func checkSessionIdentifier(_ identifier: String) throws(CoreError) {
        // A name the app and the user read back: no spaces (an identifier of spaces looks like none in any list) and
        // no control characters.
        guard !identifier.isEmpty, identifier.utf8.count <= 256,
            !identifier.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control })
        else {
            throw CoreError(
                .invalidArgument,
                "session identifier \(QuotedText.quote(identifier)) is empty, too long, or has spaces or control characters",
                fix: "use a short name such as 'com.example.app.downloads' (at most 256 bytes, no spaces)")
        }
    }

    static func unknownSession(_ key: TransferSessionKey) -> CoreError {
        CoreError(
            .noSuchTask, "'\(key.app)' has no background session \(QuotedText.quote(key.identifier))",
            fix: "create the session (its configuration with this identifier) before its tasks")
    }

    /// Checks what an app asked: an absolute http(s) URL with a host, a method that fits the kind, an upload's file,
    /// a file name that stays in the app's folder, an earliest begin date in range.
    func checkTransferRequest(_ request: inout TransferRequest, _ now: Instant) throws(CoreError) {
        let url = request.url
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") { rest = url.dropFirst(8) } else if lower.hasPrefix("http://") { rest = url.dropFirst(7) } else {
            throw CoreError(.invalidArgument, "URL \(QuotedText.quote(url)) is not an http or https URL", fix: "give an absolute http:// or https:// URL")
        }
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty, !host.hasPrefix(":"), !url.contains(where: { $0.isWhitespace || $0.isNewline }), url.utf8.count <= 8_192 else {
            throw CoreError(.invalidArgument, "URL \(QuotedText.quote(url)) has no host, or has spaces", fix: "give an absolute URL such as https://example.com/file.zip")
        }
        // A port, if given, is 1–65535: port 0 names no server (it would fail when it runs, never when created). The
        // authority is [user[:password]@]host[:port], the host an IPv6 address in brackets or a name.
        let hostPort = host.lastIndex(of: "@").map { host[host.index(after: $0)...] } ?? host
        let afterBracket = hostPort.lastIndex(of: "]").map { hostPort[$0...] } ?? hostPort
        if let colon = afterBracket.lastIndex(of: ":") {
            let digits = afterBracket[afterBracket.index(after: colon)...]
            guard digits.isEmpty || (digits.allSatisfy(\.isASCII) && Int(digits).map { (1...65_535).contains($0) } == true) else {
                throw CoreError(
                    .invalidArgument, "URL \(QuotedText.quote(url)) has port \(QuotedText.quote(String(digits))), not 1 to 65535",
                    fix: "give the server's port, or none for the scheme's own (80, 443)")
            }
        }
        let allowed = request.kind == .download ? ["GET"] : ["PUT", "POST"]
        request.method = request.method.uppercased()
        guard allowed.contains(request.method) else {
            throw CoreError(
                .invalidArgument, "method \(QuotedText.quote(request.method)) does not fit a \(request.kind.rawValue)",
                fix: "use \(allowed.joined(separator: " or "))")
        }
        if request.kind == .upload, request.uploadFile?.isEmpty ?? true {
            throw CoreError(.invalidArgument, "an upload needs the file it sends", fix: "give the file with the upload task")
        }
        let headerBytes = request.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        guard request.headers.count <= transferLimits.maximumHeaders, headerBytes <= transferLimits.maximumHeaderBytes else {
            throw CoreError(
                .invalidArgument,
                "\(request.headers.count) headers of \(headerBytes) bytes are more than a task may set "
                    + "(\(transferLimits.maximumHeaders) headers, \(transferLimits.maximumHeaderBytes) bytes)",
                fix: "send fewer or shorter headers; put data in the body or the URL's query")
        }
        for header in request.headers {
            let reserved = ["range", "if-range", "content-length", "host", "transfer-encoding", "connection"]
            // A name is an HTTP token and a value holds no control character but a tab (RFC 9110 §5.1, §5.5): the HTTP
            // client refuses anything else, so the task would be accepted only to fail when it runs.
            guard !header.name.isEmpty, header.name.unicodeScalars.allSatisfy(Self.isHeaderNameScalar),
                !header.value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }),
                !reserved.contains(header.name.lowercased())
            else {
                throw CoreError(
                    .invalidArgument, "header \(QuotedText.quote(header.name)) cannot be set on a background transfer",
                    fix: "give header names of letters, digits and !#$%&'*+-.^_`|~ and values without control characters; Range, If-Range, Content-Length, Host, Transfer-Encoding and Connection are the daemon's")
            }
        }
        // NAME_MAX: a longer name cannot be created on Linux file systems; cut silently, two names could collide.
        guard request.filename.utf8.count <= 255 else {
            throw CoreError(
                .invalidArgument, "file name of \(request.filename.utf8.count) bytes is longer than 255 bytes",
                fix: "give a file name of at most 255 bytes, or none to use the URL's")
        }
        request.filename = Self.safeFilename(request.filename, url: url)
        if let earliest = request.earliestBegin {
            if earliest > now + .seconds(double: configuration.maximumEarliestBeginAhead) {
                throw CoreError(
                    .invalidArgument, "earliest begin date \(earliest.clockTime) is more than \(Int(configuration.maximumEarliestBeginAhead)) s ahead",
                    fix: "give a date within a week")
            }
            if earliest < now - .seconds(double: configuration.maximumEarliestBeginPast) {
                throw CoreError(.invalidArgument, "earliest begin date \(earliest.clockTime) is more than a day in the past", fix: "give a date from now on, or none")
            }
        }
    }

    /// A character of an HTTP header name (RFC 9110 `tchar`).
    static func isHeaderNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": true
        default: "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
        }
    }

    /// A file name that stays inside the app's folder: the last path component of `name`, else of the URL's path,
    /// without control characters, `..` or a leading dot; `download` when nothing is left.
    public static func safeFilename(_ name: String, url: String) -> String {
        func clean(_ text: Substring) -> String {
            let last = text.split(separator: "/").last.map(String.init) ?? ""
            var result = String(last.filter { !$0.isNewline && $0 != "\0" && !($0.asciiValue.map { $0 < 32 || $0 == 127 } ?? false) && $0 != "\\" })
            while result.hasPrefix(".") { result.removeFirst() }
            // At most 200 bytes, cut on a character boundary: a long URL's last component must still be a file name.
            while result.utf8.count > 200 { result.removeLast() }
            return result
        }
        let given = clean(Substring(name))
        if !given.isEmpty { return given }
        var path = Substring(url)
        if let scheme = path.range(of: "://") { path = path[scheme.upperBound...] }
        path = path.drop { $0 != "/" }
        path = path.prefix { $0 != "?" && $0 != "#" }
        let fromURL = clean(path)
        return fromURL.isEmpty ? "download" : fromURL
    }
}
