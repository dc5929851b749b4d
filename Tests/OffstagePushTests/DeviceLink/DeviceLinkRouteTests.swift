import Crypto
import Foundation
import OffstagePush
import Synchronization
import Testing

/// The device link's front door (SPEC NT-5, decision 0035): who may pull and register, and every malformed request
/// answered with its status and a JSON reason before the store is touched.
@Suite("Device link route")
struct DeviceLinkRouteTests {
    /// A store that records what reached it.
    final class Store: DeviceLinkBackend {
        struct State {
            var pulls: [(device: String, acks: [String], wait: Duration)] = []
            var registrations: [DeviceRegistrations] = []
            var failure: (any Error)?
        }
        let state = Mutex(State())
        let waiting: [LinkedPush]

        init(waiting: [LinkedPush] = []) { self.waiting = waiting }

        func authenticate(device: String, secret: String) async throws -> Bool { device == "phone-1" && secret == "s3cret" }
        func register(_ registrations: DeviceRegistrations, device: String) async throws {
            if let failure = state.withLock({ $0.failure }) { throw failure }
            state.withLock { $0.registrations.append(registrations) }
        }
        func pull(device: String, acknowledging acks: [String], wait: Duration) async throws -> [LinkedPush] {
            state.withLock { $0.pulls.append((device, acks, wait)) }
            return waiting
        }
        var touched: Bool { state.withLock { !$0.pulls.isEmpty || !$0.registrations.isEmpty } }
    }

    static let authorization = DeviceLinkRoute.authorization(device: "phone-1", secret: "s3cret")

    static func request(
        _ method: String = "POST", _ path: String = "/device/v1/pull", body: String = #"{"acks":[],"waitSeconds":0}"#,
        authorization: String? = authorization
    ) -> PushHTTPRequest {
        PushHTTPRequest(
            method: method, path: path, headers: authorization.map { [PushHeaderField("authorization", $0)] } ?? [],
            body: Data(body.utf8), authority: "push.example.net", scheme: "https")
    }

    static func reason(_ response: PushHTTPResponse) -> String? {
        (try? JSONDecoder().decode([String: String].self, from: response.body))?["reason"]
    }

    static let token = String(repeating: "ab", count: 32)

    @Test("NT-5: a pull acknowledges, waits as asked and answers the stored pushes as JSON")
    func pullAnswersBatch() async throws {
        let push = LinkedPush(
            delivery: "41",
            AcceptedPush(
                apnsID: "0f0e0d0c-0b0a-4909-8807-060504030201", token: Self.token, app: "com.example.news", device: "phone-1",
                pushType: .alert, priority: .immediate, expiration: Date(timeIntervalSince1970: 1_800_000_000), collapseID: "c",
                payload: Data(#"{"aps":{"alert":"hi"}}"#.utf8), aps: APS(), acceptedAt: Date(timeIntervalSince1970: 1_790_000_000)))
        let store = Store(waiting: [push])
        let response = await DeviceLinkRoute(backend: store).handle(Self.request(body: #"{"acks":["40","39"],"waitSeconds":2.5}"#))
        #expect(response.status == 200)
        let batch = try JSONDecoder().decode(DeviceLinkBatch.self, from: response.body)
        #expect(batch.pushes == [push])
        let accepted = try batch.pushes[0].accepted(device: "phone-1")
        #expect(accepted.collapseID == "c" && accepted.aps.alert?.body == "hi" && accepted.expiration == push.expiresAtMillis.map(LinkedPush.date))
        let pull = try #require(store.state.withLock { $0.pulls.first })
        #expect(pull.device == "phone-1" && pull.acks == ["40", "39"] && pull.wait == .milliseconds(2500))
    }

    @Test("NT-5: registrations are passed on whole and answered 204")
    func registrationAccepted() async throws {
        let store = Store()
        let registrations = DeviceRegistrations(
            tokens: [.init(token: Self.token, app: "com.example.news", revokedAtMillis: 5)],
            subscriptions: [.init(id: "c3Vic2NyaXB0aW9uLW9uZQ", app: "com.example.news", applicationServerKey: Base64URL.encode(P256.Signing.PrivateKey().publicKey.x963Representation))])
        let body = String(decoding: try JSONEncoder().encode(registrations), as: UTF8.self)
        let response = await DeviceLinkRoute(backend: store).handle(Self.request("PUT", "/device/v1/registrations", body: body))
        #expect(response.status == 204)
        #expect(store.state.withLock { $0.registrations } == [registrations])
    }

    @Test("NT-5: without credentials, with malformed ones or a wrong secret the answer is 401 with a challenge, and nothing is read")
    func unauthorized() async throws {
        let cases: [String?] = [
            nil, "Bearer abc", "Basic !!!", "Basic " + Data("no-colon".utf8).base64EncodedString(),
            "Basic " + Data("phone-1:".utf8).base64EncodedString(), "Basic " + Data(":s3cret".utf8).base64EncodedString(),
            DeviceLinkRoute.authorization(device: "phone-1", secret: "wrong"),
            DeviceLinkRoute.authorization(device: "phone-2", secret: "s3cret"),
        ]
        for authorization in cases {
            let store = Store()
            let response = await DeviceLinkRoute(backend: store).handle(Self.request(authorization: authorization))
            #expect(response.status == 401, "\(authorization ?? "none")")
            #expect(Self.reason(response) == "Unauthorized")
            #expect(response.headers.contains { $0.name == "www-authenticate" && $0.value.hasPrefix("Basic") })
            #expect(!store.touched)
        }
        // Two authorization headers are not one device.
        var twice = Self.request()
        twice.headers.append(PushHeaderField("authorization", Self.authorization))
        #expect(await DeviceLinkRoute(backend: Store()).handle(twice).status == 401)
    }

    @Test("NT-5: an unknown path is 404, a wrong method 405 with Allow; nothing is read")
    func pathAndMethod() async throws {
        let store = Store()
        let route = DeviceLinkRoute(backend: store)
        let unknown = await route.handle(Self.request("POST", "/device/v2/pull"))
        #expect(unknown.status == 404 && Self.reason(unknown) == "BadPath")
        let get = await route.handle(Self.request("GET", "/device/v1/pull"))
        #expect(get.status == 405 && get.headers.contains(PushHeaderField("allow", "POST")))
        let post = await route.handle(Self.request("POST", "/device/v1/registrations"))
        #expect(post.status == 405 && post.headers.contains(PushHeaderField("allow", "PUT")))
        #expect(!store.touched)
        let large = route.bodyTooLarge(Self.request())
        #expect(large.status == 413 && Self.reason(large) == "PayloadTooLarge")
    }

    @Test("NT-5: a pull that is not JSON, or asks to wait outside 0 to 60 s, is 400 naming the fix; nothing is acknowledged")
    func badPulls() async throws {
        for body in ["", "[]", #"{"acks":"1","waitSeconds":1}"#, #"{"acks":[]}"#, #"{"acks":[],"waitSeconds":61}"#, #"{"acks":[],"waitSeconds":-1}"#] {
            let store = Store()
            let response = await DeviceLinkRoute(backend: store).handle(Self.request(body: body))
            #expect(response.status == 400, "\(body)")
            #expect(Self.reason(response) == "BadRequest")
            #expect(!store.touched, "\(body)")
        }
    }

    @Test("NT-5: registrations with a malformed token, subscription id, app or key are 400 naming it; nothing is registered")
    func badRegistrations() async throws {
        let key = Base64URL.encode(P256.Signing.PrivateKey().publicKey.x963Representation)
        let cases: [(DeviceRegistrations, String)] = [
            (DeviceRegistrations(tokens: [.init(token: String(Self.token.dropLast()), app: "a")]), "64 lowercase"),
            (DeviceRegistrations(tokens: [.init(token: Self.token.uppercased(), app: "a")]), "64 lowercase"),
            (DeviceRegistrations(tokens: [.init(token: Self.token, app: "")]), "names no app"),
            (DeviceRegistrations(subscriptions: [.init(id: "short", app: "a")]), "16 to 128"),
            (DeviceRegistrations(subscriptions: [.init(id: "not base64url at all!!", app: "a")]), "16 to 128"),
            (DeviceRegistrations(subscriptions: [.init(id: "c3Vic2NyaXB0aW9uLW9uZQ", app: String(repeating: "x", count: 256))]), "names no app"),
            (DeviceRegistrations(subscriptions: [.init(id: "c3Vic2NyaXB0aW9uLW9uZQ", app: "a", applicationServerKey: String(key.dropLast(2)))]), "P-256"),
        ]
        for (registrations, named) in cases {
            let store = Store()
            let body = String(decoding: try JSONEncoder().encode(registrations), as: UTF8.self)
            let response = await DeviceLinkRoute(backend: store).handle(Self.request("PUT", "/device/v1/registrations", body: body))
            #expect(response.status == 400, "\(registrations)")
            let message = (try? JSONDecoder().decode([String: String].self, from: response.body))?["message"] ?? ""
            #expect(message.contains(named), "\(message)")
            #expect(!store.touched)
        }
        let notJSON = await DeviceLinkRoute(backend: Store()).handle(Self.request("PUT", "/device/v1/registrations", body: "{"))
        #expect(notJSON.status == 400)
    }

    @Test("NT-5: a token of another device is 409 Conflict; a store failure is 500; neither is a success")
    func storeRefusals() async throws {
        let body = String(decoding: try JSONEncoder().encode(DeviceRegistrations(tokens: [.init(token: Self.token, app: "a")])), as: UTF8.self)
        let conflicting = Store()
        conflicting.state.withLock { $0.failure = DeviceLinkError(description: "The token is registered to another device.") }
        let conflict = await DeviceLinkRoute(backend: conflicting).handle(Self.request("PUT", "/device/v1/registrations", body: body))
        #expect(conflict.status == 409 && Self.reason(conflict) == "Conflict")
        struct Down: Error {}
        let failing = Store()
        failing.state.withLock { $0.failure = Down() }
        let failed = await DeviceLinkRoute(backend: failing).handle(Self.request("PUT", "/device/v1/registrations", body: body))
        #expect(failed.status == 500 && Self.reason(failed) == "InternalServerError")
    }

    @Test("NT-5: a linked push the device cannot take (unknown type, priority or payload) is refused by name, not guessed")
    func linkedPushChecked() throws {
        let good = LinkedPush(
            delivery: "1",
            AcceptedPush(
                apnsID: "id-1", token: Self.token, app: "a", device: "d", pushType: .background, priority: .powerConsidered,
                expiration: nil, collapseID: nil, payload: Data(#"{"aps":{"content-available":1}}"#.utf8), aps: APS(contentAvailable: true),
                acceptedAt: Date(timeIntervalSince1970: 0)))
        #expect(try good.accepted(device: "d").aps.contentAvailable)
        var type = good
        type.pushType = "telepathy"
        var priority = good
        priority.priority = 7
        var payload = good
        payload.payload = Data("[]".utf8)
        for (bad, named) in [(type, "push type telepathy"), (priority, "priority 7"), (payload, "bad payload")] {
            do {
                _ = try bad.accepted(device: "d")
                Issue.record("\(named) was taken")
            } catch {
                #expect(error.description.contains(named), "\(error)")
            }
        }
    }
}
