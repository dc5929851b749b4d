import SharedScenarios
import Testing

/// SCENARIOS.md S3–S9 on the test kit, written once in `SharedScenarios` and run here with the example apps' real
/// delegates on virtual time; `IntegrationTests` runs the same scripts on the real daemon with the apps' real processes
/// and holds them to the same expected values (KIT-4).
@Suite("The shared acceptance scenarios on the test kit (KIT-4)")
@MainActor
struct KitScenarioTests {
    @Test("KIT-4: each shared scenario observes on the kit what it expects", arguments: SharedScenarios.all)
    func scenario(_ scenario: Scenario) async throws {
        let (observed, expected) = try await scenario.run(KitScenarioDevice())
        #expect(observed == expected)
    }
}
