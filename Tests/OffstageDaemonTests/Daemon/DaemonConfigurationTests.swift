import Foundation
import OffstageCore
@testable import OffstageDaemon
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

    @Test("MODE-3: the location sources' numbers come under `location`, any subset; a bad one names the key and the fix")
    func locationSettings() throws {
        let (core, daemon) = try DaemonConfiguration.settings(
            from: Data(#"{"significantChangeDistance": 250, "location": {"gpsdPort": 2948, "replaySpeed": 10}}"#.utf8),
            file: "x.json")
        #expect(core.significantChangeDistance == 250)
        #expect(daemon.location.gpsdPort == 2948 && daemon.location.replaySpeed == 10 && daemon.location.gpsdHost == "127.0.0.1")
        let refused = try #require(refusal(#"{"location": {"gpsdPort": 0}}"#))
        #expect(refused.key == "location" && refused.problem.contains("gpsd port 0"))
        #expect(refusal(#"{"significantChangeDistance": -1}"#)?.key == "significantChangeDistance")
    }

    @Test("SCH-5, SCH-7: the scheduling policy's knobs come under `policy`, any subset; the others keep their documented defaults")
    func policyKnobs() throws {
        let (_, daemon) = try DaemonConfiguration.settings(
            from: Data(#"{"policy": {"resumeThreshold": 0.6, "coalescingWindow": 1800}}"#.utf8), file: "x.json")
        #expect(daemon.policy.resumeThreshold == 0.6 && daemon.policy.coalescingWindow == 1800)
        var expected = AdaptivePolicy()
        expected.resumeThreshold = 0.6
        expected.coalescingWindow = 1800
        #expect(daemon.policy == expected)
        #expect(DaemonSettings().policy == AdaptivePolicy())
        #expect(AdaptivePolicy().resumeThreshold == 0.4 && AdaptivePolicy().resumeDelay == 10)
    }

    @Test("§11 observability: metricsListen is off by default; HOST:PORT with IPv4, a name or a bracketed IPv6 host")
    func metricsListen() throws {
        #expect(DaemonSettings().metricsListen == nil && DaemonSettings().deadlineTolerance == 0.001)
        let (_, daemon) = try DaemonConfiguration.settings(
            from: Data(#"{"metricsListen": "127.0.0.1:9464", "deadlineTolerance": 0.002}"#.utf8), file: "x.json")
        #expect(daemon.metricsListen == "127.0.0.1:9464" && daemon.deadlineTolerance == 0.002)
        #expect(MetricsListenAddress("127.0.0.1:9464") == MetricsListenAddress(host: "127.0.0.1", port: 9464))
        #expect(MetricsListenAddress("localhost:1")?.host == "localhost")
        #expect(MetricsListenAddress("[::1]:65535") == MetricsListenAddress(host: "::1", port: 65535))
        for bad in ["nonsense", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", ":9464", "::1:9464", "a b:1", "[]:1"] {
            #expect(MetricsListenAddress(bad) == nil, "\(bad)")
        }
    }

    @Test("NT-2: notifications go to the desktop by default, for as long as it decides; both are settings")
    func desktopNotifications() throws {
        #expect(DaemonSettings().desktopNotifications && DaemonSettings().desktopNotificationTimeout == nil)
        #expect(DaemonSettings().desktopNotificationExpireTimeout == -1)
        let (_, daemon) = try DaemonConfiguration.settings(
            from: Data(#"{"desktopNotifications": false, "desktopNotificationTimeout": 7.5}"#.utf8), file: "x.json")
        #expect(!daemon.desktopNotifications && daemon.desktopNotificationExpireTimeout == 7_500)
    }

    @Test(
        "Each bad value names the file, the key, what is wrong and the fix that applies to that key",
        arguments: [
            (#"{"freezer": "sigstop"}"#, "freezer", "cannot be 'sigstop'", "use auto, cgroupV2, cgroupV1 or signalStop"),
            (#"{"suspendDelay": -1}"#, "suspendDelay", "must be a number of seconds from 0 to 3155760000", "correct the value"),
            (#"{"suspendDelay": 1e300}"#, "suspendDelay", "must be a number of seconds from 0 to 3155760000", "correct the value"),
            (#"{"transfers": {"retryDelay": 1e300}}"#, "transfers.retryDelay", "must be a number of seconds from 0 to", "correct the value"),
            (#"{"continuedProcessing": {"progressTimeout": 1e300}}"#, "continuedProcessing.progressTimeout", "must be a number of seconds from 0.001 to", "correct the value"),
            (#"{"backgroundPushesPerHour": 1e300}"#, "backgroundPushesPerHour", "must be a number of wakes per hour from 0 to 1000000", "correct the value"),
            (#"{"historyMaxAge": 1e300}"#, "historyMaxAge", "must be a number of seconds from 60 to 3155760000", "correct the value"),
            (#"{"eventLogCapacity": 9223372036854775807}"#, "eventLogCapacity", "must be a whole number from 100 to 10000000", "correct the value"),
            (#"{"maximumMessageSize": 10}"#, "maximumMessageSize", "must be a whole number from 4096 to 1073741824", "correct the value"),
            (#"{"shutdownTimeout": -2}"#, "shutdownTimeout", "must be a number of seconds from 0 to 3600", "correct the value"),
            (#"{"shutdownTimeout": 1e300}"#, "shutdownTimeout", "must be a number of seconds from 0 to 3600", "correct the value"),
            (#"{"freezeTimeout": 0}"#, "freezeTimeout", "must be a number of seconds from 0.001 to 3600", "correct the value"),
            (#"{"suspendDelay": "soon"}"#, "suspendDelay", "has the wrong type", "give a number"),
            (#"{"suspendDelai": 1}"#, "suspendDelai", "is not a setting", "use only:"),
            (#"{"metricsListen": "nonsense"}"#, "metricsListen", "cannot be 'nonsense'", "give HOST:PORT"),
            (#"{"metricsListen": "1.2.3.4:70000"}"#, "metricsListen", "cannot be '1.2.3.4:70000'", "give HOST:PORT"),
            (#"{"metricsListen": "::1:9464"}"#, "metricsListen", "cannot be '::1:9464'", "give HOST:PORT"),
            (#"{"metricsListen": 9464}"#, "metricsListen", "has the wrong type", "give HOST:PORT"),
            (#"{"deadlineTolerance": -1}"#, "deadlineTolerance", "must be a number of seconds from 0 to 3600", "correct the value"),
            (#"{"desktopNotificationTimeout": -1}"#, "desktopNotificationTimeout", "from 0 to 2147483 seconds", "correct the value"),
            (#"{"desktopNotifications": "yes"}"#, "desktopNotifications", "has the wrong type", "give true or false"),
            (#"{"policy": {"resumeThreshold": -0.1}}"#, "policy.resumeThreshold", "must be from 0 to 3155760000", "give the policy's knobs"),
            (#"{"policy": {"lead": 1e300}}"#, "policy.lead", "must be from 0 to 3155760000", "give the policy's knobs"),
            (#"{"location": {"maximumTrackBytes": 10}}"#, "location", "maximum track bytes 10 is out of range", "correct the value"),
            (#"{"location": {"replaySpeed": 1e300}}"#, "location", "replay speed 1e+300 is out of range", "correct the value"),
            (#"{"policy": {"habitRate": 2}}"#, "policy.habitRate", "must be from 0 to 1", "give the policy's knobs"),
            (#"{"policy": {"resumeTreshold": 0.5}}"#, "policy.resumeTreshold", "is not a knob of the adaptive policy", "give the policy's knobs"),
            (#"{"policy": {"backoffBase": 600, "backoffMax": 60}}"#, "policy.backoffMax", "at least backoffBase", "give the policy's knobs"),
            (#"{"policy": {"lead": "soon"}}"#, "lead", "has the wrong type", "give a number"),
            (#"{"memoryBudgetMB": 8}"#, "memoryBudgetMB", "must be a whole number from 16 to 1048576", "correct the value"),
            (#"{"memoryBudgetMB": 10000000000}"#, "memoryBudgetMB", "must be a whole number from 16 to 1048576", "correct the value"),
            (#"{"machinePressure": {"budgetCritical": 100}}"#, "machinePressure.budgetCritical", "must be from 1 to 99", "correct the value"),
            (#"{"machinePressure": {"budgetWarning": 90, "budgetCritical": 80}}"#, "machinePressure.budgetCritical", "at least budgetWarning", "correct the value"),
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
