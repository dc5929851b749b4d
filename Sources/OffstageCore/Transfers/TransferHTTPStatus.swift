/// What a background transfer makes of a server's status that ends its attempt (SPEC TR-4), the same in every shell:
/// the daemon's HTTP engine, and the simulated servers of the simulator and the test kit.
public enum TransferHTTPStatus {
    /// Whether retrying may change the answer: 408 Request Timeout, 429 Too Many Requests and every 5xx.
    public static func isTransient(_ status: Int) -> Bool {
        status == 408 || status == 429 || (500..<600).contains(status)
    }

    /// The attempt's end for a status that is not a success: worth retrying (``isTransient(_:)``, after the server's
    /// `retryAfter` seconds when it said so), or not. Nil for a 2xx, whose body the shell keeps.
    public static func failure(_ status: Int, retryAfter: Double?) -> TransferAttemptResult? {
        if (200..<300).contains(status) { return nil }
        if isTransient(status) { return .transient("the server answered \(describe(status))", retryAfter: retryAfter) }
        return .permanent(status: status, "the server answered \(describe(status))\(hint(status))")
    }

    /// The status with its reason phrase (RFC 9110), `404 Not Found`; the number alone for one without a phrase.
    public static func describe(_ status: Int) -> String {
        reasonPhrases[status].map { "\(status) \($0)" } ?? "\(status)"
    }

    /// What a status usually means for a background transfer, when it is not obvious; empty otherwise.
    public static func hint(_ status: Int) -> String {
        switch status {
        case 304: " (the app's conditional headers matched: there is nothing new to fetch)"
        case 300..<400: " (a redirect that was not followed: no usable Location)"
        case 401, 403: "; the app's credentials (its headers) were refused"
        case 405: "; the server does not accept this method at this URL"
        default: ""
        }
    }

    /// The reason phrases of RFC 9110 and the registered extensions.
    static let reasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content", 207: "Multi-Status", 208: "Already Reported", 226: "IM Used",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Payload Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        418: "I'm a teapot", 421: "Misdirected Request", 422: "Unprocessable Entity", 423: "Locked",
        424: "Failed Dependency", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
        431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
        507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
    ]
}
