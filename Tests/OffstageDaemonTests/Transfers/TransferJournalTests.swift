import Foundation
import GRDB
import OffstageCore
@testable import OffstageDaemon
import Testing

/// The transfer journal (SPEC TR-6): what the queue decided comes back exactly after a restart, and a damaged row is
/// skipped and named, not fatal.
@Suite("Transfers: the journal in the store (SPEC TR-6)")
struct TransferJournalTests {
    func withStore(_ body: (OffstageStore) throws -> Void) throws {
        var template = Array("/tmp/offstage-journal-XXXXXX".utf8CString)
        let folder = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(try OffstageStore(path: folder + "/offstage.sqlite"))
    }

    static func task(_ id: UInt64, state: TransferState, bytes: Int64) -> TransferTask {
        let request = TransferRequest(
            kind: .download, url: "https://files.example.com/\(id)?q=1", headers: [TransferHeader(name: "Authorization", value: "Bearer x")],
            discretionary: id % 2 == 0, earliestBegin: Instant(nanosecondsSinceEpoch: 1_800_000_000_000_000_000), filename: "f\(id).bin")
        var task = TransferTask(id: id, app: "com.example.a", session: "s", request: request, at: Instant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000))
        task.state = state
        task.bytesDone = bytes
        task.validator = TransferValidator(etag: "\"e\(id)\"", lastModified: "Tue, 24 Nov 2026 10:00:00 GMT")
        task.retryAt = Instant(nanosecondsSinceEpoch: 1_700_000_005_000_000_000)
        task.failure = state == .failed ? TransferFailure(.httpStatus, status: 404, "the server answered 404") : nil
        return task
    }

    @Test("TR-6: tasks, sessions and relaunch counts come back exactly as written; a deleted task does not")
    func roundTrip() throws {
        try withStore { store in
            let tasks = [Self.task(1, state: .running, bytes: 3 << 20), Self.task(2, state: .completed, bytes: 10), Self.task(3, state: .failed, bytes: 0)]
            var session = TransferSession(key: TransferSessionKey(app: "com.example.a", identifier: "s"), configuration: .init(discretionary: true))
            session.eventsSignalled = true
            let relaunches = TransferRelaunches(count: 3, lastAt: Instant(nanosecondsSinceEpoch: 42))
            try store.apply(tasks.map { .save($0) } + [.saveSession(session), .saveRelaunches("com.example.a", relaunches)])
            var moved = tasks[0]
            moved.bytesDone = 4 << 20
            try store.apply([.save(moved), .delete(tasks[2]), .start(moved), .stop(id: 1, attempt: 1)])
            let (journal, unreadable) = try store.loadTransfers()
            #expect(unreadable.isEmpty)
            #expect(journal.tasks == [moved, tasks[1]])
            #expect(journal.sessions == [session])
            #expect(journal.relaunches == ["com.example.a": relaunches])
            try store.apply([.saveRelaunches("com.example.a", TransferRelaunches()), .deleteSession(session.key)])
            let after = try store.loadTransfers().journal
            #expect(after.relaunches.isEmpty && after.sessions.isEmpty)
        }
    }

    @Test("TR-6: a completed upload's response body (binary, and a cut one with its flag) comes back after the store is opened again, kept as bytes beside the task's JSON, and goes with the task")
    func responseBodySurvivesReopen() throws {
        var template = Array("/tmp/offstage-journal-XXXXXX".utf8CString)
        let folder = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/offstage.sqlite"
        var whole = Self.task(1, state: .completed, bytes: 700)
        whole.request.kind = .upload
        whole.responseBody = TransferResponseBody(Data([0, 1, 2, 0xff, 0x22, 0x5c] + Array("{\"id\": 7}\n".utf8)))
        var cut = Self.task(2, state: .completed, bytes: 700)
        cut.request.kind = .upload
        cut.responseBody = TransferResponseBody(Data(repeating: 0x61, count: 65_536), truncated: true)
        let none = Self.task(3, state: .completed, bytes: 10)
        do {
            let store = try OffstageStore(path: path)
            try store.apply([.save(whole), .save(cut), .save(none)])
            let json = try store.database.read { db in try String.fetchAll(db, sql: "SELECT task FROM transfer_task ORDER BY id") }
            #expect(json.allSatisfy { !$0.contains("responseBody") }, "the bytes are not in the JSON")
        }
        let reopened = try OffstageStore(path: path)
        let (journal, unreadable) = try reopened.loadTransfers()
        #expect(unreadable.isEmpty)
        #expect(journal.tasks == [whole, cut, none])
        #expect(journal.tasks[1].responseBody?.truncated == true && journal.tasks[0].responseBody?.truncated == false)
        #expect(journal.tasks[2].responseBody == nil)
        try reopened.apply([.delete(whole)])
        #expect(try reopened.loadTransfers().journal.tasks.map(\.id) == [2, 3])
    }

    @Test("TR-6: a row that does not decode is named and skipped; the other tasks come back")
    func damagedRow() throws {
        try withStore { store in
            try store.apply([.save(Self.task(1, state: .waiting, bytes: 0)), .save(Self.task(2, state: .waiting, bytes: 0))])
            try store.database.write { db in try db.execute(sql: "UPDATE transfer_task SET task = '{\"id\": 2}' WHERE id = 2") }
            let (journal, unreadable) = try store.loadTransfers()
            #expect(journal.tasks.map(\.id) == [1])
            #expect(unreadable == ["transfer task 2"])
        }
    }
}
