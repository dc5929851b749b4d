import Foundation
import Testing

@testable import OffstagePush

/// The provider API's rules as a pure function (SPEC NT-3): path, method, headers, payload.
@Suite("APNs request rules (NT-3)")
struct RequestRulesTests {
    private func validate(_ request: PushHTTPRequest) -> Result<ValidatedPush, APNsRefusal> {
        APNsRequestRules.validate(request, now: Fixture.now)
    }

    private func headers(replacing name: String, with value: String?) -> [PushHeaderField] {
        var headers = Fixture.headers().filter { $0.name != name }
        if let value { headers.append(PushHeaderField(name, value)) }
        return headers
    }

    @Test("A valid alert push yields its token, topic, app, type, priority and verbatim payload (NT-3)")
    func validAlert() throws {
        let push = try validate(Fixture.request()).get()
        #expect(push.deviceToken == Fixture.token)
        #expect(push.topic == Fixture.app)
        #expect(push.app == Fixture.app)
        #expect(push.pushType == .alert)
        #expect(push.priority == .immediate)
        #expect(push.expiration == nil && !push.attemptOnce, "no apns-expiration: stored with no expiry")
        #expect(push.collapseID == nil)
        #expect(push.payload == Fixture.alertPayload)
        #expect(push.aps.alert == APSAlert(body: "Hello"))
        #expect(push.providerToken == "placeholder")
        #expect(push.receivedAt == Fixture.now)
    }

    // MARK: Path and method

    @Test(
        "A path outside /3/device is refused 404 BadPath (NT-3)",
        arguments: ["/", "/4/device/\(Fixture.token)", "/3/devices/\(Fixture.token)", "/3/device\(Fixture.token)", "/3/device/\(Fixture.token)/extra"]
    )
    func badPath(path: String) {
        let refusal = validate(Fixture.request(path: path)).failure
        #expect(refusal?.reason == .badPath)
        #expect(refusal?.status == 404)
    }

    @Test("A method other than POST is refused 405 MethodNotAllowed (NT-3)", arguments: ["GET", "PUT", "DELETE", "HEAD", "post"])
    func methodNotAllowed(method: String) {
        let refusal = validate(Fixture.request(method: method)).failure
        #expect(refusal?.reason == .methodNotAllowed)
        #expect(refusal?.status == 405)
    }

    @Test("The path is read in bytes: a combining mark after /3/device/ is a bad token, not another path (NT-3; fuzz regression)")
    func pathThenCombiningMark() {
        // "/" and U+0307 make one Character: read by characters, the path was not under /3/device/ (404 BadPath),
        // and the method was never looked at.
        #expect(validate(Fixture.request(path: "/3/device/\u{307}9")).failure?.reason == .badDeviceToken)
        #expect(validate(Fixture.request(method: "GET", path: "/3/device/\u{307}9")).failure?.reason == .methodNotAllowed)
        #expect(validate(Fixture.request(path: "/3/device\u{307}/9")).failure?.reason == .badPath)
    }

    @Test("A path without a device token is refused 400 MissingDeviceToken (NT-3)", arguments: ["/3/device", "/3/device/"])
    func missingDeviceToken(path: String) {
        let refusal = validate(Fixture.request(path: path)).failure
        #expect(refusal?.reason == .missingDeviceToken)
        #expect(refusal?.status == 400)
    }

    @Test(
        "A device token that is not 64 hex digits is refused 400 BadDeviceToken (NT-3)",
        arguments: [String(repeating: "a", count: 63), String(repeating: "a", count: 65), String(repeating: "g", count: 64), "not-a-token"]
    )
    func badDeviceToken(token: String) {
        let refusal = validate(Fixture.request(path: "/3/device/\(token)")).failure
        #expect(refusal?.reason == .badDeviceToken)
        #expect(refusal?.status == 400)
    }

    @Test("An uppercase device token is accepted and lowercased (NT-3)")
    func uppercaseToken() throws {
        let push = try validate(Fixture.request(path: "/3/device/\(Fixture.token.uppercased())")).get()
        #expect(push.deviceToken == Fixture.token)
    }

    // MARK: Headers

    @Test(
        "A header that matters sent twice is refused 400 DuplicateHeaders (NT-3)",
        arguments: ["authorization", "apns-topic", "apns-id", "apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id"]
    )
    func duplicateHeaders(name: String) {
        let value = [
            "authorization": "bearer x", "apns-topic": Fixture.app, "apns-id": APNsRequestRules.newID(),
            "apns-push-type": "alert", "apns-priority": "10", "apns-expiration": "0", "apns-collapse-id": "c",
        ][name]!
        let headers = headers(replacing: name, with: value) + [PushHeaderField(name, value)]
        let refusal = validate(Fixture.request(headers: headers)).failure
        #expect(refusal?.reason == .duplicateHeaders)
    }

    @Test("Repeated headers the API does not use are not duplicates (NT-3)")
    func unrelatedRepeatedHeaders() {
        let headers = Fixture.headers() + [PushHeaderField("x-trace", "1"), PushHeaderField("x-trace", "2")]
        #expect(validate(Fixture.request(headers: headers)).success != nil)
    }

    @Test(
        "A request without a bearer provider token is refused 403 MissingProviderToken (NT-3)",
        arguments: [nil, "Basic dXNlcjpwYXNz", "bearer ", "bearer", "bearer    "] as [String?]
    )
    func missingProviderToken(authorization: String?) {
        let refusal = validate(Fixture.request(headers: headers(replacing: "authorization", with: authorization))).failure
        #expect(refusal?.reason == .missingProviderToken)
        #expect(refusal?.status == 403)
    }

    @Test("The bearer scheme is case-insensitive (NT-3)")
    func bearerCase() throws {
        let push = try validate(Fixture.request(headers: headers(replacing: "authorization", with: "Bearer abc.def.ghi"))).get()
        #expect(push.providerToken == "abc.def.ghi")
    }

    @Test("The bearer scheme is read in bytes: a token that starts with a combining mark is still the token (NT-3; fuzz regression)")
    func bearerThenCombiningMark() throws {
        // "bearer " and U+0301 make one Character of the space and the mark: read by characters, the scheme was not
        // found and the request refused MissingProviderToken, though "bearer " + token re-validated from it.
        for value in ["bearer \u{301}abc", "BEARER  \u{301}abc"] {
            let push = try validate(Fixture.request(headers: headers(replacing: "authorization", with: value))).get()
            #expect(push.providerToken == "\u{301}abc", "\(value.unicodeScalars.map { $0.value })")
        }
    }

    @Test("A request without apns-topic is refused 400 MissingTopic (NT-3)")
    func missingTopic() {
        let refusal = validate(Fixture.request(headers: headers(replacing: "apns-topic", with: nil))).failure
        #expect(refusal?.reason == .missingTopic)
        #expect(refusal?.status == 400)
    }

    @Test(
        "A topic that is not a bundle identifier is refused 400 BadTopic (NT-3)",
        arguments: ["", "com example", "com/example", "é.app", String(repeating: "a", count: 256)]
    )
    func badTopic(topic: String) {
        let refusal = validate(Fixture.request(headers: headers(replacing: "apns-topic", with: topic))).failure
        #expect(refusal?.reason == .badTopic)
    }

    @Test("A topic of 255 characters is accepted (NT-3)")
    func longestTopic() {
        let topic = String(repeating: "a", count: 255)
        #expect(validate(Fixture.request(headers: headers(replacing: "apns-topic", with: topic))).success?.app == topic)
    }

    @Test(
        "A topic with the push type's suffix names the app without it (NT-3)",
        arguments: [
            (PushType.voip, "com.example.news.voip"), (.complication, "com.example.news.complication"),
            (.location, "com.example.news.location-query"), (.fileprovider, "com.example.news.pushkit.fileprovider"),
            (.liveactivity, "com.example.news.push-type.liveactivity"), (.pushtotalk, "com.example.news.voip-ptt"),
            (.widgets, "com.example.news.push-type.widgets"), (.controls, "com.example.news.push-type.controls"),
            (.voip, "com.example.news"), (.alert, "com.example.news"),
        ]
    )
    func topicSuffix(type: PushType, topic: String) throws {
        var headers = headers(replacing: "apns-topic", with: topic)
        headers.append(PushHeaderField("apns-push-type", type.rawValue))
        let push = try validate(Fixture.request(headers: headers)).get()
        #expect(push.app == Fixture.app)
        #expect(push.topic == topic)
    }

    @Test("A suffix of another push type stays part of the app (an alert to a .voip topic names that app) (NT-3)")
    func foreignSuffix() throws {
        let push = try validate(Fixture.request(headers: headers(replacing: "apns-topic", with: "com.example.news.voip"))).get()
        #expect(push.app == "com.example.news.voip")
    }

    @Test("A canonical apns-id is kept as sent, in either case (NT-3)", arguments: ["123e4567-e89b-12d3-a456-4266554400a0", "123E4567-E89B-12D3-A456-4266554400A0"])
    func apnsIDKept(id: String) throws {
        let request = Fixture.request(headers: headers(replacing: "apns-id", with: id))
        #expect(try validate(request).get().apnsID == id)
        #expect(APNsRequestRules.responseID(for: request) == id)
    }

    @Test("Without apns-id a lowercase UUID is generated (NT-3)")
    func apnsIDGenerated() throws {
        let id = try validate(Fixture.request()).get().apnsID
        #expect(APNsRequestRules.isCanonicalUUID(id))
        #expect(id == id.lowercased())
    }

    @Test(
        "An apns-id that is not a canonical UUID is refused 400 BadMessageId (NT-3)",
        arguments: ["", "abc", "123e4567e89b12d3a4564266554400a0", "123e4567-e89b-12d3-a456-4266554400a", "{123e4567-e89b-12d3-a456-4266554400a0}", "123e4567-e89b-12d3-a456_4266554400a0", "g23e4567-e89b-12d3-a456-4266554400a0"]
    )
    func badMessageID(id: String) {
        let request = Fixture.request(headers: headers(replacing: "apns-id", with: id))
        #expect(validate(request).failure?.reason == .badMessageId)
        #expect(APNsRequestRules.responseID(for: request) != id)
    }

    @Test("Every documented push type is accepted (NT-3)", arguments: PushType.allCases.filter { $0 != .background })
    func pushTypes(type: PushType) throws {
        let push = try validate(Fixture.request(headers: headers(replacing: "apns-push-type", with: type.rawValue))).get()
        #expect(push.pushType == type)
    }

    @Test("An unknown apns-push-type is refused 400 InvalidPushType (NT-3)", arguments: ["", "Alert", "silent", "voip "])
    func invalidPushType(value: String) {
        #expect(validate(Fixture.request(headers: headers(replacing: "apns-push-type", with: value))).failure?.reason == .invalidPushType)
    }

    @Test("apns-priority 10, 5 and 1 are accepted for an alert (NT-3)", arguments: PushPriority.allCases)
    func priorities(priority: PushPriority) throws {
        let push = try validate(Fixture.request(headers: headers(replacing: "apns-priority", with: String(priority.rawValue)))).get()
        #expect(push.priority == priority)
    }

    @Test("Any other apns-priority is refused 400 BadPriority (NT-3)", arguments: ["0", "2", "11", "high", "", " 10", "010"])
    func badPriority(value: String) {
        #expect(validate(Fixture.request(headers: headers(replacing: "apns-priority", with: value))).failure?.reason == .badPriority)
    }

    // MARK: Background pushes

    private let backgroundPayload = Data(#"{"aps":{"content-available":1},"feed":"sports"}"#.utf8)

    @Test("Without apns-push-type, a content-available-only payload is a background push at priority 5 (NT-3, NT-4)")
    func inferredBackground() throws {
        let push = try validate(Fixture.request(body: backgroundPayload)).get()
        #expect(push.pushType == .background)
        #expect(push.priority == .powerConsidered)
        #expect(push.aps.contentAvailable)
    }

    @Test("Without apns-push-type, content-available with an alert is an alert push (NT-3)")
    func inferredAlert() throws {
        let body = Data(#"{"aps":{"content-available":1,"alert":"New"}}"#.utf8)
        #expect(try validate(Fixture.request(body: body)).get().pushType == .alert)
    }

    @Test("A background push at priority 10 or 1 is refused 400 BadPriority, as APNs calls priority 10 an error (NT-4)", arguments: ["10", "1"])
    func backgroundPriority(priority: String) {
        let stated = headers(replacing: "apns-priority", with: priority) + [PushHeaderField("apns-push-type", "background")]
        #expect(validate(Fixture.request(headers: stated, body: backgroundPayload)).failure?.reason == .badPriority)
        let inferred = headers(replacing: "apns-priority", with: priority)
        #expect(validate(Fixture.request(headers: inferred, body: backgroundPayload)).failure?.reason == .badPriority)
    }

    @Test("A background push at priority 5 or without a priority is accepted at 5 (NT-4)", arguments: ["5", nil] as [String?])
    func backgroundPriorityFive(priority: String?) throws {
        let headers = headers(replacing: "apns-priority", with: priority) + [PushHeaderField("apns-push-type", "background")]
        #expect(try validate(Fixture.request(headers: headers, body: backgroundPayload)).get().priority == .powerConsidered)
    }

    // MARK: Expiration and collapse id

    @Test("apns-expiration 0 means do not store; a time is kept as a date (NT-3, NT-5)")
    func expiration() throws {
        let once = try validate(Fixture.request(headers: headers(replacing: "apns-expiration", with: "0"))).get()
        #expect(once.expiration == nil && once.attemptOnce)
        let push = try validate(Fixture.request(headers: headers(replacing: "apns-expiration", with: "1800003600"))).get()
        #expect(push.expiration == Date(timeIntervalSince1970: 1_800_003_600) && !push.attemptOnce)
        let latest = try validate(Fixture.request(headers: headers(replacing: "apns-expiration", with: "7258118400"))).get()
        #expect(latest.expiration == Date(timeIntervalSince1970: 7_258_118_400))
    }

    @Test(
        "A malformed apns-expiration is refused 400 BadExpirationDate (NT-3)",
        arguments: ["", "-1", "1.5", "soon", "1800000000 ", "7258118401", "99999999999999999999", "+1800000000"]
    )
    func badExpiration(value: String) {
        #expect(validate(Fixture.request(headers: headers(replacing: "apns-expiration", with: value))).failure?.reason == .badExpirationDate)
    }

    @Test("An apns-collapse-id of up to 64 bytes is kept (NT-3, NT-5)", arguments: ["a", String(repeating: "c", count: 64), String(repeating: "é", count: 32)])
    func collapseID(value: String) throws {
        #expect(try validate(Fixture.request(headers: headers(replacing: "apns-collapse-id", with: value))).get().collapseID == value)
    }

    @Test(
        "An apns-collapse-id over 64 bytes or empty is refused 400 BadCollapseId (NT-3)",
        arguments: ["", String(repeating: "c", count: 65), String(repeating: "é", count: 33)]
    )
    func badCollapseID(value: String) {
        #expect(validate(Fixture.request(headers: headers(replacing: "apns-collapse-id", with: value))).failure?.reason == .badCollapseId)
    }

    // MARK: Payload

    @Test("An empty payload is refused 400 PayloadEmpty (NT-3)")
    func emptyPayload() {
        #expect(validate(Fixture.request(body: Data())).failure?.reason == .payloadEmpty)
    }

    @Test("A payload of exactly 4096 bytes is accepted (NT-3)")
    func payloadAtLimit() throws {
        let body = Fixture.payload(size: 4096)
        #expect(body.count == 4096)
        #expect(try validate(Fixture.request(body: body)).get().payload == body)
    }

    @Test("A payload of 4097 bytes is refused 413 PayloadTooLarge (NT-3)")
    func payloadOverLimit() {
        let refusal = validate(Fixture.request(body: Fixture.payload(size: 4097))).failure
        #expect(refusal?.reason == .payloadTooLarge)
        #expect(refusal?.status == 413)
    }

    @Test("A VoIP payload may carry 5120 bytes but not 5121 (NT-3)")
    func voipLimit() throws {
        let voip = headers(replacing: "apns-push-type", with: "voip")
        #expect(try validate(Fixture.request(headers: voip, body: Fixture.payload(size: 5120))).get().payload.count == 5120)
        #expect(validate(Fixture.request(headers: voip, body: Fixture.payload(size: 5121))).failure?.reason == .payloadTooLarge)
        let alert = headers(replacing: "apns-push-type", with: "alert")
        #expect(validate(Fixture.request(headers: alert, body: Fixture.payload(size: 4097))).failure?.reason == .payloadTooLarge)
    }

    @Test(
        "A payload that is not a JSON object with an aps dictionary is refused 400 PayloadEmpty (NT-3)",
        arguments: [
            "not json", "[1,2]", "\"aps\"", "null", "{}", #"{"alert":"hi"}"#, #"{"aps":"hi"}"#, #"{"aps":[1]}"#,
            #"{"aps":{"badge":"three"}}"#, #"{"aps":{"alert":42}}"#, #"{"aps":{"sound":{"volume":1}}}"#,
            #"{"aps":{"content-available":"1"}}"#, #"{"aps":{"alert":{"loc-args":[1]}}}"#, #"{"aps":{}"#,
        ]
    )
    func badPayload(body: String) {
        let refusal = validate(Fixture.request(body: Data(body.utf8))).failure
        #expect(refusal?.reason == .payloadEmpty)
        #expect(refusal?.status == 400)
        #expect(refusal?.detail.isEmpty == false)
    }

    @Test("The first failing rule answers: the path before the method, the method before the headers (NT-3)")
    func order() {
        #expect(validate(Fixture.request(method: "GET", path: "/nowhere", headers: [])).failure?.reason == .badPath)
        #expect(validate(Fixture.request(method: "GET", headers: [])).failure?.reason == .methodNotAllowed)
        #expect(validate(Fixture.request(headers: [], body: Data())).failure?.reason == .missingProviderToken)
        let noTopic = [PushHeaderField("authorization", "bearer x")]
        #expect(validate(Fixture.request(headers: noTopic, body: Data())).failure?.reason == .missingTopic)
    }
}
