import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

/// The scheduling policy the daemon's core runs with comes from its configuration (SPEC SCH-5, SCH-7).
@Suite("The daemon's scheduling policy setting", .serialized)
struct PolicySettingTests {
    typealias Fixture = NotificationEngineFixture

    @Test("SCH-7: the daemon's core decides with the knobs of the configuration's `policy`, and with the defaults without one")
    func engineUsesTheConfiguredPolicy() throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        var settings = DaemonSettings()
        settings.policy.resumeThreshold = 0.9
        settings.policy.staleWakeAfter = 86_400
        let engine = try fixture.engine(desktop: nil, settings: settings)
        let used = try fixture.onLoop(engine) { engine.core.policy as? AdaptivePolicy }
        #expect(used?.resumeThreshold == 0.9 && used?.staleWakeAfter == 86_400 && used?.lead == 900)
        try fixture.settle(engine)
        let restarted = try fixture.engine(desktop: nil)
        #expect(try fixture.onLoop(restarted) { restarted.core.policy as? AdaptivePolicy } == AdaptivePolicy())
    }
}
