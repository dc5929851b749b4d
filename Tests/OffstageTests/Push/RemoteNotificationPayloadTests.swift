import Foundation
import OffstageProtocol
import Testing

@testable import Offstage

/// SPEC NT-3, NT-4, the app's side: what a push's payload reads as — the remote-notification handler's user info, and
/// the user info of an alert push in the delivered list.
@Suite("Remote notification payloads (NT-3, NT-4)")
struct RemoteNotificationPayloadTests {
    static let payload =
        #"{"aps":{"content-available":1,"alert":{"title":"Ann","body":"Lunch?"},"badge":3},"#
        + #""message":"m-42","count":2,"ratio":0.5,"tags":["a",1],"note":null}"#

    @Test("NT-4: the handler's user info is the whole payload: aps as a dictionary, whole numbers as Int")
    func wholePayload() throws {
        let userInfo = try RemoteNotificationDispatch.userInfo(payload: Self.payload, apnsID: "E7C1F0B2-0000-4000-8000-000000000001")
        let aps = try #require(RemoteNotification.aps(in: userInfo))
        #expect(aps["content-available"] as? Int == 1 && aps["badge"] as? Int == 3)
        #expect((aps["alert"] as? [String: any Sendable])?["body"] as? String == "Lunch?")
        #expect(userInfo["message"] as? String == "m-42" && userInfo["count"] as? Int == 2)
        #expect(userInfo["ratio"] as? Double == 0.5)
        #expect((userInfo["tags"] as? [any Sendable])?.count == 2)
        #expect(userInfo["note"] == nil, "null is left out, as in a notification's user info")
        #expect(RemoteNotification.isContentAvailable(userInfo))
    }

    @Test("NT-4: the push's apns-id is under RemoteNotification.apnsIDKey, beside the payload's keys")
    func apnsID() throws {
        let userInfo = try RemoteNotificationDispatch.userInfo(payload: #"{"aps":{}}"#, apnsID: "ID-1")
        #expect(userInfo[RemoteNotification.apnsIDKey] as? String == "ID-1")
        #expect(userInfo.count == 2)
        #expect(!RemoteNotification.isContentAvailable(userInfo))
    }

    @Test("NT-4: a payload that is not a JSON object is refused with what was wrong and the fix")
    func notAnObject() {
        for payload in [#"[1,2]"#, "not json", "", nil] as [String?] {
            #expect(throws: RemoteNotificationError.self) {
                try RemoteNotificationDispatch.userInfo(payload: payload, apnsID: "x")
            }
        }
        do throws(RemoteNotificationError) {
            _ = try RemoteNotificationDispatch.userInfo(payload: "[]", apnsID: nil)
        } catch {
            #expect(error.code == .invalidArgument && error.fix.contains("aps"))
        }
    }

    @Test("NT-4: an alert push in the delivered list reads its whole payload, aps included, as user info")
    func deliveredAlertPush() throws {
        // As the daemon sends a delivered alert push: the payload is the content's user info.
        let json =
            #"{"request":{"identifier":"E7C1F0B2-0000-4000-8000-000000000002","content":{"title":"Ann","body":"Lunch?","#
            + #""userInfo":\#(Self.payload)},"trigger":{"kind":"date","date":1795500000}},"#
            + #""due":1795500000,"deliveredAt":1795500000.5,"late":false,"route":"user"}"#
        let message = try JSONDecoder().decode(NotificationsInterface.DeliveredMessage.self, from: Data(json.utf8))
        let notification = UserNotification(message)
        let userInfo = notification.request.content.userInfo
        #expect(notification.request.content.body == "Lunch?")
        #expect(RemoteNotification.aps(in: userInfo)?["badge"] as? Int == 3)
        #expect(userInfo["message"] as? String == "m-42")
    }

    @Test("NT-3: a registration reads the token as 64 hex digits and 32 bytes; a bad token or gateway is refused")
    func registrationParts() throws {
        let hex = String(repeating: "0f", count: 31) + "A0"
        let registration = try #require(
            RemoteNotificationRegistration(token: hex, gateway: "http://127.0.0.1:2197", topic: "com.example.messenger"))
        #expect(registration.token == hex.lowercased())
        #expect(registration.deviceToken.count == 32 && registration.deviceToken.first == 0x0F)
        #expect(registration.deviceToken.last == 0xA0)
        #expect(registration.gateway.port == 2197 && registration.topic == "com.example.messenger")
        #expect(RemoteNotificationRegistration(token: "abc", gateway: "http://h:1", topic: "t") == nil)
        #expect(RemoteNotificationRegistration(token: String(repeating: "zz", count: 32), gateway: "http://h:1", topic: "t") == nil)
        #expect(RemoteNotificationRegistration(token: hex, gateway: "", topic: "t") == nil)
        #expect(RemoteNotificationRegistration(token: hex, gateway: "ftp://h:1", topic: "t") == nil)
    }
}
