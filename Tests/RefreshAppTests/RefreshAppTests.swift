import Foundation
import Offstage
import OffstageTesting
import Testing

@testable import RefreshApp

/// The RefreshApp example's own tests, as its developer would write them with the test kit: its real delegate, its
/// real `Info.plist`, on virtual time, with no daemon (SPEC SCH-1..4).
@Suite("RefreshApp, tested with OffstageTesting (KIT-1)")
@MainActor
struct RefreshAppTests {
    /// The example's manifest, beside its source.
    static let infoPlist = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/RefreshApp/Info.plist")

    @Test("The refresh it submits a minute ahead runs in the background, and it submits the next one from the handler")
    func refreshesInTheBackground() async throws {
        let device = await TestDevice()
        let app = try device.install(infoPlist: Self.infoPlist) { RefreshAppDelegate(arguments: []) }
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(59))
        #expect(!app.callbacks.contains(.runTask(RefreshAppDelegate.refreshIdentifier)), "not before its earliest begin")
        try await device.advance(by: .seconds(12 * 3600))
        #expect(app.callbacks.contains(.runTask(RefreshAppDelegate.refreshIdentifier)))
        #expect(app.isSuspended, "suspended again once the run completed")
        let pending = try app.explain(RefreshAppDelegate.refreshIdentifier)
        #expect(pending.count == 1 && !pending[0].isRunning, "the handler submitted the next refresh")
    }

    @Test("SCH-1: the identifier its manifest does not list is refused at registration; the listed one is not")
    func unlistedIdentifierRefused() async throws {
        let device = await TestDevice()
        let app = try device.install(infoPlist: Self.infoPlist) { RefreshAppDelegate(arguments: []) }
        try await device.open(app)
        #expect(throws: TestKitError.self) { try app.explain(RefreshAppDelegate.unlistedIdentifier) }
        #expect(try app.explain(RefreshAppDelegate.refreshIdentifier).count == 1)
    }

    @Test("A refresh that outlasts its time gets the expiration handler, and the run ends as failed")
    func expiration() async throws {
        let device = await TestDevice()
        let app = try device.install(infoPlist: Self.infoPlist) { RefreshAppDelegate(arguments: ["--refresh-seconds", "600"]) }
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(61))
        #expect(app.callbacks.last == .runTask(RefreshAppDelegate.refreshIdentifier), "due a minute after it was submitted")
        #expect(try app.explain(RefreshAppDelegate.refreshIdentifier).contains { $0.isRunning })
        try await app.expireTaskNow(RefreshAppDelegate.refreshIdentifier)
        #expect(app.callbacks.last == .taskExpiring)
        #expect(app.log.contains { $0.contains("completed") && $0.contains("failed") }, "\(app.log)")
    }
}
