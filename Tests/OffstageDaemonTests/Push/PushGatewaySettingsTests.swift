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

    @Test("NT-5: remote names the gateway, the device and its secret file; nodes default to the url")
    func remote() throws {
        let settings = try Self.settings(
            #"{"remote":{"url":"https://push.example.net","device":"phone-17","secretFile":"/etc/offstage/push-secret"}}"#)
        #expect(settings.problems.isEmpty)
        #expect(settings.remote?.linkOrigins == ["https://push.example.net"])
        let nodes = try Self.settings(
            #"{"remote":{"url":"https://push.example.net","device":"p","secretFile":"s","nodes":["https://n1.example.net:8443","http://10.0.0.2:2197"]}}"#)
        #expect(nodes.problems.isEmpty && nodes.remote?.linkOrigins.count == 2)
    }

    @Test("NT-5: a remote with a bad url or node, a device name with a colon, an empty secret file or no nodes is a problem naming it")
    func badRemote() throws {
        let cases: [(String, String)] = [
            (#""url":"push.example.net","device":"p","secretFile":"s""#, "url push.example.net"),
            (#""url":"https://push.example.net/x","device":"p","secretFile":"s""#, "url https://push.example.net/x"),
            (#""url":"https://push.example.net","device":"p","secretFile":"s","nodes":["ftp://n1"]"#, "nodes ftp://n1"),
            (#""url":"https://push.example.net","device":"p","secretFile":"s","nodes":[]"#, "nodes is empty"),
            (#""url":"https://push.example.net","device":"a:b","secretFile":"s""#, "device a:b"),
            (#""url":"https://push.example.net","device":"p","secretFile":"""#, "secretFile is empty"),
        ]
        for (fields, named) in cases {
            let problems = try Self.settings(#"{"remote":{\#(fields)}}"#).problems
            #expect(problems.count == 1 && problems[0].hasPrefix("remote.") && problems[0].contains(named), "\(fields): \(problems)")
        }
        #expect(throws: DecodingError.self) { try Self.settings(#"{"remote":{"url":"https://push.example.net"}}"#) }
    }
}
