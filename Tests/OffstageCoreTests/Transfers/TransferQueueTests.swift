import OffstageCore
import OffstageSimulator
import Testing

/// What runs, when, and what a failure does (SPEC TR-4, TR-5, TR-6), on virtual time.
@Suite("Background transfers: the queue (SPEC TR-4, TR-5, TR-6)")
struct TransferQueueTests {
    static let big: Int64 = 1_000_000_000_000

    @Test("TR-4: a transient failure waits 5 s, then 10 s, 20 s … before the next attempt; Retry-After waits longer when the server asks; progress resets the backoff")
    func transientBackoff() throws {
        var (sim, ids) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": Self.big])
        let id = ids[0]
        var waits: [Double] = []
        for _ in 0..<3 {
            sim.endAttempt(id, .transient("connection reset", retryAfter: nil))
            let waiting = try #require(sim.transfer(id))
            #expect(waiting.state == .waiting)
            #expect(sim.core.transferHolds(waiting, at: sim.now).map(\.controller) == ["retry"])
            waits.append(try #require(waiting.retryAt).secondsSinceEpoch - sim.now.secondsSinceEpoch)
            sim.run(for: .seconds(100))
            #expect(sim.transfer(id)?.state == .running, "it tried again")
        }
        #expect(waits.map { $0.rounded() } == [5, 10, 20])
        let task = try #require(sim.transfer(id))
        #expect(task.attempts == 3 && task.attempt == 4)
        // Retry-After longer than the backoff wins.
        sim.endAttempt(id, .transient("503 Service Unavailable", retryAfter: 300))
        let retryAt = try #require(sim.transfer(id)?.retryAt)
        #expect(approximately((retryAt - sim.now).inSeconds, 300))
        // Bytes moving again resets the count of failures in a row.
        sim.run(for: .seconds(301))
        let running = try #require(sim.transfer(id))
        sim.input { core, now in core.transferProgress(id, attempt: running.attempt, bytesDone: 1 << 20, bytesExpected: nil, validator: nil, at: now) }
        #expect(sim.transfer(id)?.attempts == 0)
    }

    @Test("TR-4: the waits double from 5 s up to 900 s")
    func backoffSchedule() {
        let limits = TransferLimits()
        #expect((1...10).map { limits.retryWait(failures: $0, serverAsked: nil) } == [5, 10, 20, 40, 80, 160, 320, 640, 900, 900])
        #expect(limits.retryWait(failures: 1, serverAsked: 60) == 60)
    }

    @Test("TR-4: a permanent failure ends the task with the HTTP status; no retry")
    func permanentFailure() throws {
        var (sim, ids) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": -1])
        sim.run(for: .seconds(1))
        #expect(sim.transferEventsHeard[appA] == ids)
        let journaled = try #require(sim.log.first { $0.message.contains("transfer \(ids[0]) failed") })
        #expect(journaled.message.contains("404"))
        #expect(sim.handedOverTransfers.isEmpty)
    }

    @Test("TR-5: a discretionary transfer of an app in the background waits for an unmetered network and a charger")
    func discretionaryWaits() throws {
        var sim = makeSimulation()
        sim.transferSizes = ["https://files.example.com/big.bin": Self.big]
        try sim.setConditions(ConditionOverrides(charging: false, network: .metered))
        try sim.openAndSettle(appA)
        sim.openTransferSession(appA, identifier: downloads)
        let created = sim.createTransfer(appA, session: downloads, download(discretionary: true))
        let id = try #require(created)
        #expect(sim.transfer(id)?.state == .running, "in front, a discretionary task runs at once (as the platform does)")
        sim.home()
        sim.run(for: .seconds(1))
        let held = try #require(sim.transfer(id))
        #expect(held.state == .waiting)
        let controllers = sim.core.transferHolds(held, at: sim.now).map(\.controller)
        #expect(controllers.contains("network") && controllers.contains("power"))
        try sim.setConditions(ConditionOverrides(charging: true, network: .metered))
        #expect(sim.transfer(id)?.state == .waiting)
        try sim.setConditions(ConditionOverrides(charging: true, network: .unmetered))
        #expect(sim.transfer(id)?.state == .running)
    }

    @Test("TR-5: no network holds every transfer; a session that refuses metered networks waits for an unmetered one; restricted background data holds it on a metered one")
    func networkConditions() throws {
        var (sim, ids) = try Simulation.withDownloads(
            session: TransferSessionConfiguration(allowsMeteredNetwork: false), sizes: ["https://files.example.com/big.bin": Self.big])
        let id = ids[0]
        try sim.setConditions(ConditionOverrides(network: NetworkKind.none))
        #expect(sim.transfer(id)?.state == .waiting)
        try sim.setConditions(ConditionOverrides(network: .metered))
        #expect(sim.core.transferHolds(try #require(sim.transfer(id)), at: sim.now) == [.meteredNotAllowed])
        try sim.setConditions(ConditionOverrides(network: .unmetered))
        #expect(sim.transfer(id)?.state == .running)

        var (other, otherIDs) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": Self.big])
        var settings = try #require(other.core.apps[appA]?.app.settings)
        settings.backgroundData = false
        try other.setAppSettings(settings, for: appA)
        try other.setConditions(ConditionOverrides(network: .metered))
        #expect(other.transfer(otherIDs[0])?.state == .running, "in front, restricted background data does not apply")
        other.home()
        other.run(for: .seconds(1))
        #expect(other.core.transferHolds(try #require(other.transfer(otherIDs[0])), at: other.now) == [.backgroundDataRestricted])
    }

    @Test("TR-5: a transfer with an earliest begin date starts then, not before")
    func earliestBegin() throws {
        var sim = makeSimulation()
        sim.transferSizes = ["https://files.example.com/big.bin": Self.big]
        try sim.openAndSettle(appA)
        sim.openTransferSession(appA, identifier: downloads)
        let at = sim.now + .seconds(600)
        let created = sim.createTransfer(appA, session: downloads, download(earliestBegin: at))
        let id = try #require(created)
        #expect(sim.core.transferHolds(try #require(sim.transfer(id)), at: sim.now) == [.earliestBegin(at)])
        #expect(sim.core.nextDeadline.map { $0 <= at } == true, "a deadline is armed for it")
        sim.run(for: .seconds(599))
        #expect(sim.transfer(id)?.state == .waiting)
        sim.run(for: .seconds(2))
        #expect(sim.transfer(id)?.state == .running)
    }

    @Test("At most 6 run at once, 4 per app; the foreground app's come first and take a slot from an app in the background")
    func concurrencyAndPriority() throws {
        var sim = makeSimulation()
        let urls = (0..<8).map { "https://files.example.com/\($0)" }
        for url in urls { sim.transferSizes[url] = Self.big }
        try sim.openAndSettle(appB)
        sim.openTransferSession(appB, identifier: "b")
        let bTasks = urls.compactMap { sim.createTransfer(appB, session: "b", download($0)) }
        #expect(bTasks.filter { sim.transfer($0)?.state == .running }.count == 4, "4 per app")
        try sim.openAndSettle(appA)
        sim.openTransferSession(appA, identifier: downloads)
        let aTasks = urls.compactMap { sim.createTransfer(appA, session: downloads, download($0)) }
        let runningA = aTasks.filter { sim.transfer($0)?.state == .running }.count
        let runningB = bTasks.filter { sim.transfer($0)?.state == .running }.count
        #expect(runningA == 4, "the app in front gets its full share")
        #expect(runningB == 2, "6 in all: the app in the background gave up two slots")
        sim.home()
        sim.run(for: .seconds(1))
        #expect(aTasks.filter { sim.transfer($0)?.state == .running }.count == 3)
        #expect(bTasks.filter { sim.transfer($0)?.state == .running }.count == 3, "in the background, fair shares")
    }

    @Test("TR-6: after a restart, a task that was running waits again, resumes from its checkpoint with its validator, and finished tasks' events are still there")
    func restoreAfterRestart() throws {
        var (sim, ids) = try Simulation.withDownloads(
            ["https://files.example.com/1", "https://files.example.com/2"],
            sizes: ["https://files.example.com/1": Self.big, "https://files.example.com/2": 1_000])
        sim.run(for: .seconds(1))
        let first = try #require(sim.transfer(ids[0]))
        let validator = TransferValidator(etag: "\"v1\"", lastModified: nil)
        sim.input { core, now in core.transferProgress(ids[0], attempt: first.attempt, bytesDone: 3 << 20, bytesExpected: 10 << 20, validator: validator, at: now) }
        // The journal as the store holds it, read by a new core.
        let journal = Array(sim.transferJournal.values)
        #expect(journal.count == 1, "the delivered one is forgotten; the running one is journaled")
        var core = OffstageCore()
        for (_, entry) in sim.core.apps { core.restore(entry.app, durable: entry.durable) }
        let restored = core.restoreTransfers(tasks: journal, sessions: Array(sim.core.transfers.sessions.values), relaunches: [:])
        #expect(restored.contains { if case .transfer(.save(let task)) = $0 { task.interrupted && task.state == .waiting } else { false } })
        let actions = core.advance(to: sim.now)
        let start = try #require(actions.compactMap { if case .transfer(.start(let task)) = $0 { task } else { nil } }.first)
        #expect(start.id == ids[0] && start.bytesDone == 3 << 20 && start.validator == validator)
        #expect(start.attempt == first.attempt + 1, "a new attempt number: reports of the old one are ignored")
    }

    @Test("A task with no byte moved for the resource timeout fails as timed out")
    func resourceTimeout() throws {
        var configuration = CoreConfiguration()
        configuration.transfers.resourceTimeout = 3_600
        var (sim, ids) = try Simulation.withDownloads(configuration: configuration, sizes: ["https://files.example.com/big.bin": Self.big])
        try sim.setConditions(ConditionOverrides(network: NetworkKind.none))
        sim.run(for: .seconds(3_601))
        #expect(sim.transferEventsHeard[appA] == ids, "the app heard it ended")
        #expect(sim.logLines(of: appA, .transfer).contains { $0.contains("transfer \(ids[0]) failed: no byte moved for 3600 s") })
    }

    @Test("Pause stops a task until resumed; an app cannot touch another app's transfers")
    func pauseResumeAndIsolation() throws {
        var (sim, ids) = try Simulation.withDownloads(sizes: ["https://files.example.com/big.bin": Self.big])
        let id = ids[0]
        #expect(throws: CoreError.self) { try sim.input { core, now in try core.changeTransfer(id, .cancel, app: appB, at: now) } }
        #expect(sim.transfer(id)?.state == .running, "nothing changed")
        try sim.input { core, now in try core.changeTransfer(id, .pause, app: appA, at: now) }
        #expect(sim.transfer(id)?.state == .paused)
        sim.run(for: .seconds(3_600))
        #expect(sim.transfer(id)?.state == .paused)
        try sim.input { core, now in try core.changeTransfer(id, .resume, app: nil, at: now) }
        #expect(sim.transfer(id)?.state == .running)
        try sim.input { core, now in try core.changeTransfer(id, .cancel, app: nil, at: now) }
        #expect(sim.transfer(id)?.failure?.code == .cancelled || sim.transferEventsHeard[appA] == [id])
    }

    @Test("Bad input: unknown session, bad URL or port, wrong method, reserved header, too many headers, a long file name, far earliest begin date — each refused naming it, nothing created")
    func badInput() throws {
        var (sim, _) = try Simulation.withDownloads([])
        let pid = try #require(sim.status(of: appA)?.pid)
        func refusal(_ session: String, _ request: TransferRequest) -> String? {
            do {
                _ = try sim.input { core, now in try core.createTransfer(appA, pid: pid, session: session, request: request, at: now) }
                return nil
            } catch let error as CoreError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal("nope", download())?.contains("no background session") == true)
        #expect(refusal(downloads, download("ftp://files.example.com/x"))?.contains("not an http or https URL") == true)
        #expect(refusal(downloads, download("https:///x"))?.contains("no host") == true)
        #expect(refusal(downloads, download("https://a b/x"))?.contains("no host") == true)
        #expect(refusal(downloads, TransferRequest(kind: .download, url: "https://e.com/x", method: "DELETE", filename: ""))?.contains("method") == true)
        #expect(refusal(downloads, TransferRequest(kind: .upload, url: "https://e.com/x", filename: ""))?.contains("needs the file") == true)
        #expect(refusal(downloads, TransferRequest(kind: .download, url: "https://e.com/x", headers: [TransferHeader(name: "Range", value: "bytes=0-")], filename: ""))?.contains("Range") == true)
        #expect(refusal(downloads, download(earliestBegin: sim.now + .seconds(30 * 86_400)))?.contains("ahead") == true)
        // §11: what would be accepted only to fail when it runs, or cut silently, is refused when created.
        #expect(refusal(downloads, download("https://e.com:0/x"))?.contains("has port '0', not 1 to 65535") == true)
        #expect(refusal(downloads, download("https://e.com:70000/x"))?.contains("has port '70000'") == true)
        #expect(refusal(downloads, download("https://[::1]:0/x"))?.contains("has port '0'") == true)
        #expect(refusal(downloads, download("https://user:pass@e.com:0/x"))?.contains("has port '0'") == true)
        let many = (0..<5_000).map { TransferHeader(name: "X-\($0)", value: "v") }
        #expect(refusal(downloads, TransferRequest(kind: .download, url: "https://e.com/x", headers: many, filename: ""))?
            .contains("5000 headers of") == true)
        let long = [TransferHeader(name: "X-Long", value: String(repeating: "v", count: 20_000))]
        #expect(refusal(downloads, TransferRequest(kind: .download, url: "https://e.com/x", headers: long, filename: ""))?
            .contains("more than a task may set (64 headers, 16384 bytes)") == true)
        let name = String(repeating: "n", count: 5_000)
        #expect(refusal(downloads, TransferRequest(kind: .download, url: "https://e.com/x", filename: name))?
            .contains("file name of 5000 bytes is longer than 255 bytes") == true)
        for identifier in ["", "   ", "a b", "tab\there", String(repeating: "x", count: 257)] {
            let refused = #expect(throws: CoreError.self) {
                try sim.input { core, now in try core.openTransferSession(appA, pid: pid, identifier: identifier, configuration: .init(), at: now) }
            }
            #expect(refused?.fix.contains("no spaces") == true)
        }
        #expect(sim.core.transfers.tasks.isEmpty && sim.transferJournal.isEmpty)
    }

    @Test("A download's file name stays in the app's folder: the URL's last path component, no dots in front, no slashes")
    func filenames() {
        #expect(OffstageCore.safeFilename("", url: "https://e.com/a/b/issue-42.pdf?x=1") == "issue-42.pdf")
        #expect(OffstageCore.safeFilename("../../etc/passwd", url: "https://e.com/") == "passwd")
        #expect(OffstageCore.safeFilename("", url: "https://e.com/") == "download")
        #expect(OffstageCore.safeFilename("..", url: "https://e.com/.hidden") == "hidden")
    }
}
