import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// SPEC SCH-11 on a real desktop session: the real daemon on a private `dbus-daemon` with the test notification server,
/// and the real `Exporter`. A running export is one progress notification, updated in place with a progress bar;
/// Cancel there cancels the task as `offstage cancel-task` does; the notification is taken off when the task ends.
@Suite("Continued processing on a desktop session (SPEC SCH-11)", .serialized)
struct ContinuedProcessingDesktopTests {
    typealias Export = ContinuedProcessingIntegrationTests

    /// The Notify calls about the exporter's task.
    static func progressRecords(_ bus: PrivateSessionBus) -> [[String: Any]] {
        bus.records().filter { record in
            (record["hints"] as? [String: [Any]])?["x-offstage-task"]?.last as? String == "\(Export.exporter)/\(Export.first)"
        }
    }

    static func percent(_ record: [String: Any]) -> Int? {
        (record["hints"] as? [String: [Any]])?["value"]?.last as? Int
    }

    @Test("SCH-11: the running export is one notification on the desktop, updated in place with its progress bar; Cancel there cancels the task, whose notification is then taken off")
    func progressOnTheDesktopAndCancel() throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        try bus.startServer()
        try withDaemon(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]) { daemon in
            try Export.install(daemon, items: 200, itemMilliseconds: 100)
            try Export.openAndSubmit(daemon, Export.exporter)
            try daemon.ok("home")
            // Shown, then updated in place as the export goes on.
            let updated = PrivateSessionBus.waitFor(timeout: .seconds(20)) { () -> [[String: Any]]? in
                let records = Self.progressRecords(bus)
                return records.count >= 3 && (records.last.flatMap(Self.percent) ?? 0) > 0 ? records : nil
            }
            let records = try #require(updated, "progress notifications: \(Self.progressRecords(bus))")
            let first = records[0]
            let id = try #require(first["id"] as? Int)
            #expect(first["replaces_id"] as? Int == 0)
            #expect(first["app_name"] as? String == Export.exporter)
            #expect(first["summary"] as? String == "Exporting 200 items", "\(first)")
            #expect(first["expire_timeout"] as? Int == 0, "it stays while the task runs")
            #expect((first["actions"] as? [String]) == ["default", "Open", "cancel", "Cancel"])
            for later in records.dropFirst() {
                #expect(later["replaces_id"] as? Int == id && later["id"] as? Int == id, "updated in place: \(later)")
            }
            let percents = records.compactMap(Self.percent)
            #expect(percents == percents.sorted() && percents.allSatisfy { (0...100).contains($0) }, "\(percents)")
            let body = try #require(records.last?["body"] as? String)
            #expect(body.contains(" of 200)"), "\(body)")

            // The user presses Cancel on the desktop.
            try bus.command("invoke \(id) cancel")
            try daemon.waitUntil("the export ended") { try Export.done(daemon, Export.exporter) != nil }
            let done = try #require(try Export.done(daemon, Export.exporter))
            #expect(done.contains("— cancelled by the user"), "\(done)")
            try daemon.waitUntil("the app heard its expiration handler") {
                daemon.output(Export.exporter).contains("export expired at")
            }
            let withdrawn = PrivateSessionBus.waitFor(timeout: .seconds(10)) { bus.closeRequests().contains(UInt32(id)) ? true : nil }
            #expect(withdrawn == true, "taken off the desktop once the task ended: \(bus.closeRequests())")
            try daemon.waitFor(Export.exporter, "suspended", timeout: 10)
        }
    }
}
