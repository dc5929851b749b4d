import Foundation

@testable import OffstagePush

/// The properties every input of the `push-request` fuzz target must keep (SPEC NT-3: "APNs-style error reasons and
/// status codes"; §11: malformed input gets a clear error). An input is one provider API request, framed as text:
///
///     METHOD PATH\n
///     name: value\n        (any number of header lines, repeated names kept, in order)
///     \n
///     BODY                  (the rest, verbatim)
///
/// An input without an empty line is a body alone, under a valid head (``defaultHead``), so the fuzzer reaches the
/// payload parser (`PayloadParser`) without having to write a head first. The request goes through
/// `APNsRequestRules.validate` as the gateway's front door gives it every request, before any provider key or store.
///
/// Compiled twice, like the other targets' checks: into OffstagePushTests (`PushRequestFuzzRegressionTests` replays
/// the committed inputs) and by `scripts/fuzz` next to `Fuzz/Targets/PushRequestFuzz.swift`, with only the sources of
/// `Sources/OffstagePush/APNs` compiled in as the module `OffstagePush` (they import Foundation alone: no NIO, no JWT).
enum PushRequestFuzzChecks {
    /// A property that did not hold, in words.
    struct Violation: Error, CustomStringConvertible {
        var description: String

        init(_ description: String) { self.description = description }
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000.25)
    static let defaultHead = """
        POST /3/device/\(String(repeating: "0123456789abcdef", count: 4))
        authorization: bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ.e30.c2ln
        apns-topic: com.example.fuzz
        apns-id: 123e4567-e89b-12d3-a456-426614174000
        """

    /// The reasons the request rules give, each with the status APNs documents for it ("Handling notification
    /// responses from APNs"), written out here rather than read from `APNsReason.status`, which is under test.
    static let documentedStatus: [APNsReason: Int] = [
        .badPath: 404, .methodNotAllowed: 405, .missingDeviceToken: 400, .badDeviceToken: 400, .duplicateHeaders: 400,
        .missingProviderToken: 403, .missingTopic: 400, .badTopic: 400, .badMessageId: 400, .invalidPushType: 400,
        .badPriority: 400, .badExpirationDate: 400, .badCollapseId: 400, .payloadEmpty: 400, .payloadTooLarge: 413,
    ]

    /// How far an input went.
    enum Outcome: Equatable {
        case accepted
        case refused(APNsReason)
    }

    /// The request an input frames.
    static func request(_ bytes: [UInt8]) -> PushHTTPRequest {
        let separator = bytes.indices.dropLast().first { bytes[$0] == 10 && bytes[$0 + 1] == 10 }
        let head: String
        let body: [UInt8]
        if let separator {
            head = String(decoding: bytes[..<separator], as: UTF8.self)
            body = Array(bytes[(separator + 2)...])
        } else {
            head = defaultHead
            body = bytes
        }
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false)
        let requestLine = lines.isEmpty ? "" : lines.removeFirst()
        let method: Substring
        let path: Substring
        if let space = requestLine.firstIndex(of: " ") {
            method = requestLine[..<space]
            path = requestLine[requestLine.index(after: space)...]
        } else {
            method = requestLine
            path = ""
        }
        let headers = lines.map { line -> PushHeaderField in
            guard let colon = line.firstIndex(of: ":") else { return PushHeaderField(String(line), "") }
            var value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            return PushHeaderField(String(line[..<colon]), String(value))
        }
        return PushHTTPRequest(method: String(method), path: String(path), headers: headers, body: Data(body))
    }

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        let request = request(bytes)
        let first = APNsRequestRules.validate(request, now: now)
        let again = APNsRequestRules.validate(request, now: now)
        let sentID = request.values(of: APNsHeaderName.id)
        // The same request, the same answer (a request without an apns-id gets a new one each time).
        switch (first, again) {
        case (.success(var one), .success(let two)):
            if sentID.isEmpty { one.apnsID = two.apnsID }
            guard one == two else { throw Violation("validated twice, the same request gave \(one) and \(two)") }
        case (.failure(let one), .failure(let two)):
            guard one == two else { throw Violation("validated twice, the same request was refused \(one) and \(two)") }
        default:
            throw Violation("validated twice, the same request was accepted once and refused once: \(first), \(again)")
        }
        switch first {
        case .failure(let refusal):
            try checkRefusal(refusal, of: request)
            return .refused(refusal.reason)
        case .success(let push):
            try checkAccepted(push, of: request)
            return .accepted
        }
    }

    /// A refusal carries a reason the rules give, with the status APNs documents, a body exactly as APNs writes it,
    /// and a detail; the response's apns-id is the request's valid one or a new UUID. Path and method come first.
    static func checkRefusal(_ refusal: APNsRefusal, of request: PushHTTPRequest) throws(Violation) {
        guard let status = documentedStatus[refusal.reason] else {
            throw Violation("refused with \(refusal.reason.rawValue), which the request rules never give: \(refusal)")
        }
        guard refusal.status == status, refusal.reason.status == status else {
            throw Violation("\(refusal.reason.rawValue) answered with status \(refusal.status); APNs documents \(status)")
        }
        guard refusal.timestamp == nil else { throw Violation("\(refusal.reason.rawValue) carries a timestamp") }
        guard !refusal.detail.isEmpty else { throw Violation("\(refusal.reason.rawValue) has no detail") }
        let body = try? JSONSerialization.jsonObject(with: refusal.body) as? [String: String]
        guard let body, body == ["reason": refusal.reason.rawValue] else {
            throw Violation("the error body \(String(decoding: refusal.body, as: UTF8.self)) is not {\"reason\":\"\(refusal.reason.rawValue)\"}")
        }
        let responseID = APNsRequestRules.responseID(for: request)
        guard APNsRequestRules.isCanonicalUUID(responseID) else { throw Violation("the response's apns-id \(responseID) is not a UUID") }
        let sent = request.values(of: APNsHeaderName.id)
        if sent.count == 1, APNsRequestRules.isCanonicalUUID(sent[0]), responseID != sent[0] {
            throw Violation("the response's apns-id \(responseID) is not the request's \(sent[0])")
        }
        // The path and the method are checked before anything else.
        let prefix = APNsRequestRules.pathPrefix
        let pathIsAPI = request.path.hasPrefix(prefix)
            && (request.path.utf8.count == prefix.utf8.count || request.path.utf8.dropFirst(prefix.utf8.count).first == UInt8(ascii: "/"))
        if !pathIsAPI, refusal.reason != .badPath {
            throw Violation("the path \(request.path.debugDescription) is not the provider API's, but the refusal is \(refusal)")
        }
        if pathIsAPI, request.method != "POST", refusal.reason != .methodNotAllowed {
            throw Violation("the method \(request.method.debugDescription) is not POST, but the refusal is \(refusal)")
        }
    }

    /// An accepted push holds what the request said, normalised, and the request APNs clients would send for it
    /// (every header explicit, in another order) is accepted as the very same push.
    static func checkAccepted(_ push: ValidatedPush, of request: PushHTTPRequest) throws(Violation) {
        guard push.deviceToken.utf8.count == 64,
            push.deviceToken.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
            request.path.lowercased() == APNsRequestRules.pathPrefix + "/" + push.deviceToken
        else { throw Violation("the device token \(push.deviceToken) is not the path's, in 64 lowercase hexadecimal digits") }
        guard APNsRequestRules.isCanonicalUUID(push.apnsID) else { throw Violation("the apns-id \(push.apnsID) is not a UUID") }
        let sentID = request.values(of: APNsHeaderName.id)
        if let sent = sentID.first, sent != push.apnsID { throw Violation("the apns-id \(push.apnsID) is not the request's \(sent)") }
        guard request.values(of: APNsHeaderName.topic) == [push.topic], !push.topic.isEmpty else {
            throw Violation("the topic \(push.topic.debugDescription) is not the request's one apns-topic")
        }
        guard push.app == push.pushType.app(forTopic: push.topic) else { throw Violation("the app \(push.app) is not the topic's") }
        if push.pushType == .background, push.priority != .powerConsidered {
            throw Violation("a background push accepted with priority \(push.priority.rawValue)")
        }
        guard push.payload == request.body, !push.payload.isEmpty, push.payload.count <= push.pushType.maximumPayloadBytes else {
            throw Violation("the payload (\(push.payload.count) bytes) is not the body, or over the \(push.pushType.rawValue) limit")
        }
        guard case .success(let aps) = PayloadParser.parse(push.payload), aps == push.aps else {
            throw Violation("the push's aps \(push.aps) is not what the payload parses to")
        }
        if let expiration = push.expiration, expiration.timeIntervalSince1970 > Double(APNsRequestRules.latestExpiration) {
            throw Violation("expiration \(expiration) is past the latest the rules allow")
        }
        if let collapse = push.collapseID, collapse.isEmpty || collapse.utf8.count > 64 {
            throw Violation("collapse id of \(collapse.utf8.count) bytes accepted")
        }
        guard push.receivedAt == now, !push.providerToken.isEmpty else { throw Violation("receivedAt or provider token wrong: \(push)") }
        // Re-validated from what was accepted, every header explicit and in reverse order: the same push.
        var headers = [
            PushHeaderField(APNsHeaderName.authorization, "bearer " + push.providerToken),
            PushHeaderField(APNsHeaderName.topic, push.topic),
            PushHeaderField(APNsHeaderName.id, push.apnsID),
            PushHeaderField(APNsHeaderName.pushType, push.pushType.rawValue),
            PushHeaderField(APNsHeaderName.priority, String(push.priority.rawValue)),
        ]
        if push.attemptOnce, push.expiration != nil { throw Violation("a push both to attempt once and to expire: \(push)") }
        if let expiration = push.expiration {
            headers.append(PushHeaderField(APNsHeaderName.expiration, String(Int64(expiration.timeIntervalSince1970))))
        } else if push.attemptOnce {
            headers.append(PushHeaderField(APNsHeaderName.expiration, "0"))
        }
        if let collapse = push.collapseID { headers.append(PushHeaderField(APNsHeaderName.collapseID, collapse)) }
        let canonical = PushHTTPRequest(
            method: "POST", path: APNsRequestRules.pathPrefix + "/" + push.deviceToken, headers: headers.reversed(),
            body: push.payload)
        switch APNsRequestRules.validate(canonical, now: now) {
        case .success(let again) where again == push:
            break
        case .success(let again):
            throw Violation("re-validated from what was accepted, the request gave another push: \(push) then \(again)")
        case .failure(let refusal):
            throw Violation("re-validated from what was accepted (\(push)), the request was refused: \(refusal)")
        }
    }
}
