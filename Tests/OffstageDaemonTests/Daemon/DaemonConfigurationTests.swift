import Foundation
import OffstageDaemon
import Testing

@Suite("The daemon's configuration file (SPEC: every number is a setting; bad input gets a clear error)")
struct DaemonConfigurationTests {
    func refusal(_ json: String) -> ConfigurationError? {
        do {
            _ = try DaemonConfiguration.settings(from: Data(json.utf8), file: "/etc/offstage.json")
            return nil
        } catch {
            return error
        }
    }

    @Test("A known key with a good value is read; every other key keeps its default")
    func goodFile() throws {
        let (core, daemon) = try DaemonConfiguration.settings(
            from: Data(#"{"suspendDelay": 0.5, "freezer": "signalStop"}"#.utf8), file: "x.json")
        #expect(core.suspendDelay == 0.5 && core.backgroundTaskBudget == 30)
        #expect(daemon.freezer == "signalStop" && daemon.shutdownTimeout == 10)
    }

    @Test(
        "Each bad value names the file, the key, what is wrong and the fix that applies to that key",
        arguments: [
            (#"{"freezer": "sigstop"}"#, "freezer", "cannot be 'sigstop'", "use auto, cgroupV2, cgroupV1 or signalStop"),
            (#"{"suspendDelay": -1}"#, "suspendDelay", "non-negative number of seconds", "correct the value"),
            (#"{"maximumMessageSize": 10}"#, "maximumMessageSize", "at least 4096 bytes", "correct the value"),
            (#"{"shutdownTimeout": -2}"#, "shutdownTimeout", "non-negative number of seconds", "correct the value"),
            (#"{"freezeTimeout": 0}"#, "freezeTimeout", "positive number of seconds", "correct the value"),
            (#"{"suspendDelay": "soon"}"#, "suspendDelay", "has the wrong type", "give a number"),
            (#"{"suspendDelai": 1}"#, "suspendDelai", "is not a setting", "use only:"),
        ])
    func badValue(json: String, key: String, problem: String, fix: String) throws {
        let error = try #require(refusal(json))
        #expect(error.path == "/etc/offstage.json" && error.key == key)
        #expect(error.problem.contains(problem), "\(error.problem)")
        #expect(error.fix.hasPrefix(fix), "\(error.fix)")
        #expect(!error.fix.contains("seconds") || key != "freezer")
        #expect(!error.description.contains("\n"))
    }
}
