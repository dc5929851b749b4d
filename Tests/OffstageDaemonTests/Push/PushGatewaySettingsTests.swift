import Foundation
@testable import OffstageDaemon
import Testing

/// The `push` setting (SPEC NT-3): what is accepted, and a clear problem for what is not.
@Suite("PushGatewaySettings")
struct PushGatewaySettingsTests {
    static func settings(_ json: String) throws -> PushGatewaySettings {
        try JSONDecoder().decode(PushGatewaySettings.self, from: Data(json.utf8))
    }

    @Test("NT-3: publicURL is kept as an origin, lowercase scheme and no trailing slash; registrations and endpoints carry it")
    func publicOrigin() throws {
        #expect(try Self.settings(#"{"publicURL":"HTTPS://push.example.net/"}"#).publicOrigin == "https://push.example.net")
        #expect(try Self.settings(#"{"publicURL":"http://[::1]:8443"}"#).publicOrigin == "http://[::1]:8443")
        #expect(try Self.settings(#"{}"#).publicOrigin == nil)
        #expect(try Self.settings(#"{"publicURL":"https://push.example.net"}"#).problems.isEmpty)
    }

    @Test("NT-3: a publicURL that is not an http(s) origin is a problem naming it and the fix")
    func badPublicURL() throws {
        for bad in ["push.example.net", "ftp://push.example.net", "https://push.example.net/push", "https://x?y=1"] {
            let problems = try Self.settings(#"{"publicURL":"\#(bad)"}"#).problems
            #expect(problems.count == 1 && problems[0].contains(bad) && problems[0].contains("https://push.example.net"), "\(bad): \(problems)")
        }
    }
}
