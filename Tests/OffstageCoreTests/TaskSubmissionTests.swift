import OffstageCore
import OffstageSimulator
import Testing

@Suite("Submitting scheduled work (SPEC SCH-1, SCH-2, MAN-4)")
struct TaskSubmissionTests {
    @Test("SCH-1: an identifier listed in BGTaskSchedulerPermittedIdentifiers may be registered; another is not permitted")
    func registrationNeedsAListedIdentifier() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(refreshApp))
        try sim.openAndSettle(refreshApp)
        let pid = try #require(sim.status(of: refreshApp)?.pid)
        try sim.core.checkTaskIdentifier(refreshApp, pid: pid, identifier: refreshID)
        let error = #expect(throws: CoreError.self) {
            try sim.core.checkTaskIdentifier(refreshApp, pid: pid, identifier: "com.example.unlisted")
        }
        #expect(error?.code == .notPermitted)
        #expect(error?.message.contains("BGTaskSchedulerPermittedIdentifiers") == true)
    }

    @Test("SCH-2: a second refresh request for the same identifier replaces the first")
    func resubmittingReplaces() throws {
        var sim = try suspendedSchedulingApp()
        try sim.openAndSettle(refreshApp)
        #expect(sim.submit(refreshApp, .init(refreshID, earliestAfter: .seconds(60))) == nil)
        #expect(sim.submit(refreshApp, .init(refreshID, earliestAfter: .seconds(600))) == nil)
        let pending = sim.core.apps[refreshApp]!.durable.schedule.requests
        #expect(pending.count == 1)
        #expect(pending[refreshID]?.earliestBegin == sim.now + .seconds(600))
        #expect(sim.logLines(of: refreshApp, .schedule).last?.hasPrefix("replaced") == true)
    }

    @Test("SCH-2: cancel one, cancel all, list pending; cancelling what is not pending is harmless")
    func cancelAndList() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(refreshApp))
        try sim.openAndSettle(refreshApp)
        let pid = try #require(sim.status(of: refreshApp)?.pid)
        #expect(sim.submit(refreshApp, .init(refreshID)) == nil)
        #expect(sim.submit(refreshApp, .init(processingID, kind: .processing)) == nil)
        #expect(try sim.core.pendingTasks(refreshApp, pid: pid).map(\.identifier) == [refreshID, processingID].sorted())
        var cancelled = try sim.input { core, now in try core.cancelTask(refreshApp, pid: pid, identifier: refreshID, at: now) }
        #expect(cancelled)
        cancelled = try sim.input { core, now in try core.cancelTask(refreshApp, pid: pid, identifier: refreshID, at: now) }
        #expect(!cancelled, "a second cancel finds nothing and changes nothing")
        try sim.input { core, now in try core.cancelAllTasks(refreshApp, pid: pid, at: now) }
        #expect(try sim.core.pendingTasks(refreshApp, pid: pid).isEmpty)
    }

    @Test("SCH-2: at most 10 processing requests per app; the 11th is refused with too-many-pending, nothing changed")
    func processingLimit() throws {
        let ids = (0..<11).map { "com.example.p\($0)" }
        var sim = Simulation()
        sim.install(schedulingManifest(processingApp, identifiers: ids))
        try sim.openAndSettle(processingApp)
        for id in ids.prefix(10) { #expect(sim.submit(processingApp, .init(id, kind: .processing)) == nil) }
        let error = sim.submit(processingApp, .init(ids[10], kind: .processing))
        #expect(error?.code == .tooManyPendingRequests)
        #expect(sim.core.apps[processingApp]!.durable.schedule.requests.count == 10)
        // Resubmitting one already pending replaces it and is not refused.
        #expect(sim.submit(processingApp, .init(ids[0], kind: .processing, earliestAfter: .seconds(30))) == nil)
    }

    @Test("SCH-2, MAN-4: a refresh without the fetch mode, or an unlisted identifier, is not permitted")
    func notPermitted() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(refreshApp, modes: [.processing]))
        try sim.openAndSettle(refreshApp)
        let noMode = sim.submit(refreshApp, .init(refreshID))
        #expect(noMode?.code == .notPermitted)
        #expect(noMode?.message.contains("'fetch' background mode") == true)
        #expect(noMode?.fix.contains("UIBackgroundModes") == true)
        let unlisted = sim.submit(refreshApp, .init("com.example.other", kind: .processing))
        #expect(unlisted?.code == .notPermitted)
        #expect(sim.core.apps[refreshApp]!.durable.schedule.requests.isEmpty)
    }

    @Test("SCH-2: unavailable when background refresh is off for the app or the device, or in low power mode")
    func unavailable() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(refreshApp))
        try sim.openAndSettle(refreshApp)
        var settings = AppSettings()
        settings.backgroundRefresh = false
        try sim.setAppSettings(settings, for: refreshApp)
        #expect(sim.submit(refreshApp, refreshSubmission)?.code == .unavailable)
        try sim.setAppSettings(AppSettings(), for: refreshApp)
        var device = DeviceSettings()
        device.backgroundRefresh = false
        sim.setDeviceSettings(device)
        #expect(sim.submit(refreshApp, refreshSubmission)?.message.contains("off for the device") == true)
        device = DeviceSettings()
        device.lowPowerMode = true
        sim.setDeviceSettings(device)
        #expect(sim.submit(refreshApp, refreshSubmission)?.message.contains("low power mode") == true)
        #expect(sim.core.apps[refreshApp]!.durable.schedule.requests.isEmpty)
    }

    @Test("SCH-2 bad input: empty identifier, dates absurdly far ahead or long past are refused; a near past means now")
    func badDates() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(refreshApp, identifiers: [refreshID, ""]))
        try sim.openAndSettle(refreshApp)
        #expect(sim.submit(refreshApp, .init(""))?.code == .invalidArgument)
        let far = sim.submit(refreshApp, .init(refreshID, earliestAfter: .seconds(400 * 86_400)))
        #expect(far?.code == .invalidArgument)
        #expect(far?.message.contains("days ahead") == true)
        let pid = try #require(sim.status(of: refreshApp)?.pid)
        let past = TaskRequest(
            identifier: refreshID, kind: .appRefresh, earliestBegin: sim.now - .seconds(3 * 86_400), submittedAt: sim.now)
        #expect(throws: CoreError.self) { try sim.input { core, now in try core.submitTask(refreshApp, pid: pid, request: past, at: now) } }
        #expect(sim.core.apps[refreshApp]!.durable.schedule.requests.isEmpty, "nothing changed")
        let recent = TaskRequest(
            identifier: refreshID, kind: .appRefresh, earliestBegin: sim.now - .seconds(60), submittedAt: sim.now)
        try sim.input { core, now in try core.submitTask(refreshApp, pid: pid, request: recent, at: now) }
        #expect(try sim.explain(refreshApp, refreshID).first?.holds.map(\.controller).contains("time-window") == false)
    }

    @Test("SCH-2: another app's process cannot submit, cancel or complete for this app")
    func onlyItsOwnRequests() throws {
        var sim = Simulation()
        sim.install(schedulingManifest(refreshApp))
        sim.install(schedulingManifest(newsApp))
        try sim.openAndSettle(refreshApp)
        try sim.openAndSettle(newsApp)
        let newsPid = try #require(sim.status(of: newsApp)?.pid)
        let request = TaskRequest(identifier: refreshID, kind: .appRefresh, submittedAt: sim.now)
        #expect(throws: CoreError.self) {
            try sim.input { core, now in try core.submitTask(refreshApp, pid: newsPid, request: request, at: now) }
        }
        #expect(throws: CoreError.self) { try sim.input { core, now in try core.cancelAllTasks(refreshApp, pid: newsPid, at: now) } }
        #expect(throws: CoreError.self) {
            try sim.input { core, now in try core.completeTask(refreshApp, pid: newsPid, run: 1, result: .newData, at: now) }
        }
    }
}
