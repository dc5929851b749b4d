import Foundation
import Testing

@testable import OffstagePush

/// The `aps` dictionary typed, and the APNs reasons with their status codes and bodies (SPEC NT-3).
@Suite("Payload and reasons (NT-3)")
struct PayloadAndReasonTests {
    private func aps(_ json: String) throws -> APS {
        try APNsRequestRules.validate(Fixture.request(body: Data(json.utf8)), now: Fixture.now).get().aps
    }

    @Test("An alert dictionary keeps title, subtitle, body, launch image and the localisation keys as sent (NT-3)")
    func alertDictionary() throws {
        let parsed = try aps(
            #"{"aps":{"alert":{"title":"T","subtitle":"S","body":"B","launch-image":"L","title-loc-key":"TK","title-loc-args":["a"],"subtitle-loc-key":"SK","subtitle-loc-args":["b","c"],"loc-key":"K","loc-args":["d"]}}}"#
        )
        #expect(
            parsed.alert
                == APSAlert(
                    title: "T", subtitle: "S", body: "B", launchImage: "L", titleLocKey: "TK", titleLocArgs: ["a"],
                    subtitleLocKey: "SK", subtitleLocArgs: ["b", "c"], locKey: "K", locArgs: ["d"]))
    }

    @Test("A string alert is the body (NT-3)")
    func alertString() throws {
        #expect(try aps(#"{"aps":{"alert":"Goal!"}}"#).alert == APSAlert(body: "Goal!"))
    }

    @Test("Badge, sound, thread-id, category, content-available and mutable-content are typed (NT-3, NT-4)")
    func otherKeys() throws {
        let parsed = try aps(
            #"{"aps":{"badge":3,"sound":"chime.caf","thread-id":"match-7","category":"SCORE","content-available":1,"mutable-content":1,"interruption-level":"active"}}"#
        )
        #expect(parsed == APS(badge: 3, sound: APSSound(name: "chime.caf"), threadID: "match-7", category: "SCORE", contentAvailable: true, mutableContent: true))
    }

    @Test("A sound dictionary keeps its name, critical flag and volume (NT-3)")
    func soundDictionary() throws {
        #expect(try aps(#"{"aps":{"sound":{"name":"alarm","critical":1,"volume":0.5}}}"#).sound == APSSound(name: "alarm", critical: true, volume: 0.5))
    }

    @Test("content-available other than 1 does not make a background push (NT-4)")
    func contentAvailableZero() throws {
        let push = try APNsRequestRules.validate(
            Fixture.request(body: Data(#"{"aps":{"content-available":0}}"#.utf8)), now: Fixture.now
        ).get()
        #expect(!push.aps.contentAvailable)
        #expect(push.pushType == .alert)
    }

    @Test("The whole payload, custom keys included, is kept byte for byte (NT-3)")
    func verbatim() throws {
        let body = Data(#"{ "aps" : {"alert":"x"}, "match": {"id": 7, "score": [1, 0]} }"#.utf8)
        #expect(try APNsRequestRules.validate(Fixture.request(body: body), now: Fixture.now).get().payload == body)
    }

    /// Apple's table of reasons and status codes.
    static let documented: [(String, Int)] = [
        ("BadCollapseId", 400), ("BadDeviceToken", 400), ("BadExpirationDate", 400), ("BadMessageId", 400),
        ("BadPriority", 400), ("BadTopic", 400), ("DeviceTokenNotForTopic", 400), ("DuplicateHeaders", 400),
        ("IdleTimeout", 400), ("InvalidPushType", 400), ("MissingDeviceToken", 400), ("MissingTopic", 400),
        ("PayloadEmpty", 400), ("TopicDisallowed", 400), ("BadCertificate", 403), ("BadCertificateEnvironment", 403),
        ("ExpiredProviderToken", 403), ("Forbidden", 403), ("InvalidProviderToken", 403), ("MissingProviderToken", 403),
        ("UnrelatedKeyIdInToken", 403), ("BadEnvironmentKeyInToken", 403), ("BadPath", 404), ("MethodNotAllowed", 405),
        ("ExpiredToken", 410), ("Unregistered", 410), ("PayloadTooLarge", 413), ("TooManyProviderTokenUpdates", 429),
        ("TooManyRequests", 429), ("InternalServerError", 500), ("ServiceUnavailable", 503), ("Shutdown", 503),
    ]

    @Test("Every documented reason exists with its status code, and no other (NT-3)")
    func reasons() {
        #expect(APNsReason.allCases.count == Self.documented.count)
        for (name, status) in Self.documented {
            #expect(APNsReason(rawValue: name)?.status == status, "\(name)")
        }
    }

    @Test("An error body is {\"reason\": …}; Unregistered adds the revocation time in milliseconds (NT-3)")
    func bodies() throws {
        let plain = try JSONSerialization.jsonObject(with: APNsRefusal(.badTopic, "x").body) as? [String: Any]
        #expect(plain?.count == 1)
        #expect(plain?["reason"] as? String == "BadTopic")
        let revokedAt = Date(timeIntervalSince1970: 1_700_000_000.123)
        let gone = try JSONSerialization.jsonObject(with: APNsRefusal(.unregistered, "x", timestamp: revokedAt).body) as? [String: Any]
        #expect(gone?["reason"] as? String == "Unregistered")
        #expect((gone?["timestamp"] as? NSNumber)?.int64Value == 1_700_000_000_123)
    }
}
