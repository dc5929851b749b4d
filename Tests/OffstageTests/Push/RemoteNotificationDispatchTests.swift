import Foundation
import OffstageProtocol
import Testing

@testable import Offstage

/// SPEC NT-4, the app's side: a `remoteNotification` callback runs the delegate's handler once and completes the run
/// once (`CompleteRemoteNotification`) with its result — also when the handler throws, never completes, or there is no
/// delegate — and a run sent again is not handled twice.
@Suite("Remote-notification handler (NT-4)", .serialized)
@MainActor
struct RemoteNotificationDispatchTests {
    /// A delegate whose async handler does what `behaviour` says, and records what it was given.
    final class AsyncHandler: ApplicationDelegate {
        enum Behaviour { case result(BackgroundFetchResult), throwError, hang }
        var behaviour: Behaviour
        var heard: [String] = []
        var cancelled = false
        init(_ behaviour: Behaviour) { self.behaviour = behaviour }

        func application(
            _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable]
        ) async throws -> BackgroundFetchResult {
            heard.append("\(userInfo["message"] ?? "-") \(userInfo[RemoteNotification.apnsIDKey] ?? "-")")
            switch behaviour {
            case .result(let result): return result
            case .throwError: throw CocoaError(.fileReadNoSuchFile)
            case .hang:
                try? await Task.sleep(for: .seconds(30))
                cancelled = Task.isCancelled
                return .newData
            }
        }
    }

    /// A delegate in UIKit's completion-handler shape, which calls the handler `calls` times.
    final class CompletionHandler: ApplicationDelegate {
        let calls: [BackgroundFetchResult]
        var heard = 0
        init(_ calls: [BackgroundFetchResult]) { self.calls = calls }

        func application(
            _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable],
            fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
        ) {
            heard += 1
            let calls = calls
            DispatchQueue.global().async { for result in calls { completionHandler(result) } }
        }
    }

    /// A delegate that implements no push method at all.
    final class Silent: ApplicationDelegate {}

    static func callback(id: UInt64 = 1, run: UInt64, payload: String? = #"{"aps":{"content-available":1},"message":"m-42"}"#)
        -> AppInterface.CallbackMessage
    {
        AppInterface.CallbackMessage(id: id, kind: "remoteNotification", run: run, pushId: "P-\(run)", payload: payload)
    }

    static func dispatch(_ daemon: FakeModesDaemon, limit: Duration = .seconds(27)) -> RemoteNotificationDispatch {
        RemoteNotificationDispatch(link: DaemonLink(environment: ["OFFSTAGE_SOCKET": daemon.path]), timeLimit: limit)
    }

    /// The completions the stand-in daemon read, once `count` have come or 3 s have passed.
    static func completions(_ daemon: FakeModesDaemon, count: Int) async throws -> [String] {
        for _ in 0..<300 where daemon.calls("CompleteRemoteNotification").count < count {
            try await Task.sleep(for: .milliseconds(10))
        }
        return daemon.calls("CompleteRemoteNotification").map(\.parameters)
    }

    @Test("NT-4: the async handler gets the payload and the apns-id; its result completes the run")
    func asyncResult() async throws {
        let daemon = try FakeModesDaemon()
        defer { daemon.close() }
        let dispatch = Self.dispatch(daemon)
        let delegate = AsyncHandler(.result(.newData))
        dispatch.receive(Self.callback(run: 5), application: .shared, delegate: delegate)
        #expect(try await Self.completions(daemon, count: 1) == [#"{"result":"newData","run":5}"#])
        #expect(delegate.heard == ["m-42 P-5"])
        #expect(!dispatch.isOpen(5))
    }

    @Test("NT-4: a handler that throws completes the run as failed")
    func throwingHandler() async throws {
        let daemon = try FakeModesDaemon()
        defer { daemon.close() }
        Self.dispatch(daemon).receive(Self.callback(run: 6), application: .shared, delegate: AsyncHandler(.throwError))
        #expect(try await Self.completions(daemon, count: 1) == [#"{"result":"failed","run":6}"#])
    }

    @Test("NT-4: a delegate without a handler, or no delegate at all, completes with no data")
    func defaultHandler() async throws {
        let daemon = try FakeModesDaemon()
        defer { daemon.close() }
        let dispatch = Self.dispatch(daemon)
        dispatch.receive(Self.callback(run: 7), application: .shared, delegate: Silent())
        dispatch.receive(Self.callback(id: 2, run: 8), application: .shared, delegate: nil)
        #expect(
            Set(try await Self.completions(daemon, count: 2))
                == [#"{"result":"noData","run":7}"#, #"{"result":"noData","run":8}"#])
    }

    @Test("NT-4: the completion handler completes once, from any thread; later calls are ignored")
    func completionHandlerOnce() async throws {
        let daemon = try FakeModesDaemon()
        defer { daemon.close() }
        Self.dispatch(daemon).receive(
            Self.callback(run: 9), application: .shared, delegate: CompletionHandler([.noData, .newData, .failed]))
        #expect(try await Self.completions(daemon, count: 1) == [#"{"result":"noData","run":9}"#])
        try await Task.sleep(for: .milliseconds(100))
        #expect(daemon.calls("CompleteRemoteNotification").count == 1)
    }

    @Test("NT-4: a handler that never completes is completed as failed before the 30 s, and its task cancelled")
    func forgottenCompletion() async throws {
        let daemon = try FakeModesDaemon()
        defer { daemon.close() }
        let dispatch = Self.dispatch(daemon, limit: .milliseconds(200))
        let hanging = AsyncHandler(.hang)
        dispatch.receive(Self.callback(run: 10), application: .shared, delegate: hanging)
        dispatch.receive(Self.callback(id: 2, run: 11), application: .shared, delegate: CompletionHandler([]))
        #expect(
            Set(try await Self.completions(daemon, count: 2))
                == [#"{"result":"failed","run":10}"#, #"{"result":"failed","run":11}"#])
        for _ in 0..<100 where !hanging.cancelled { try await Task.sleep(for: .milliseconds(10)) }
        #expect(hanging.cancelled, "the async handler's task is cancelled when its time is up")
        try await Task.sleep(for: .milliseconds(100))
        #expect(daemon.calls("CompleteRemoteNotification").count == 2, "the cancelled handler's return is ignored")
    }

    /// A delegate in the completion-handler shape whose work answers the moment it is cancelled: the cancellation
    /// handler runs inside `cancel()`, so its answer comes between the deadline's cancel and the deadline's own
    /// completion — deterministically the race a handler that returns when cancelled can win under load.
    final class AnswersWhenCancelled: ApplicationDelegate {
        func application(
            _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable],
            fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
        ) {
            let work = Task<Void, Never> {
                await withTaskCancellationHandler {
                    try? await Task.sleep(for: .seconds(30))
                } onCancel: {
                    completionHandler(.newData)
                }
            }
            RemoteNotificationRun.current?.attach(work)
        }
    }

    @Test("NT-4: a handler that answers as soon as its deadline cancels it never overrides the deadline's failed")
    func cancelledAnswerLosesToTheDeadline() async throws {
        let daemon = try FakeModesDaemon()
        defer { daemon.close() }
        Self.dispatch(daemon, limit: .milliseconds(50)).receive(
            Self.callback(run: 14), application: .shared, delegate: AnswersWhenCancelled())
        #expect(try await Self.completions(daemon, count: 1) == [#"{"result":"failed","run":14}"#])
        try await Task.sleep(for: .milliseconds(100))
        #expect(daemon.calls("CompleteRemoteNotification").count == 1, "the cancelled handler's answer is ignored")
    }

    @Test("NT-4: the same run sent again (after a reconnect) runs the handler once and completes once")
    func repeatedRun() async throws {
        let daemon = try FakeModesDaemon()
        defer { daemon.close() }
        let dispatch = Self.dispatch(daemon)
        let delegate = CompletionHandler([.newData])
        dispatch.receive(Self.callback(id: 1, run: 12), application: .shared, delegate: delegate)
        dispatch.receive(Self.callback(id: 2, run: 12), application: .shared, delegate: delegate)
        _ = try await Self.completions(daemon, count: 1)
        dispatch.receive(Self.callback(id: 3, run: 12), application: .shared, delegate: delegate)
        try await Task.sleep(for: .milliseconds(100))
        #expect(delegate.heard == 1)
        #expect(daemon.calls("CompleteRemoteNotification").map(\.parameters) == [#"{"result":"newData","run":12}"#])
    }

    @Test("NT-4: a payload that is not a JSON object completes the run as failed without calling the handler")
    func unreadablePayload() async throws {
        let daemon = try FakeModesDaemon()
        defer { daemon.close() }
        let delegate = AsyncHandler(.result(.newData))
        Self.dispatch(daemon).receive(Self.callback(run: 13, payload: "[]"), application: .shared, delegate: delegate)
        #expect(try await Self.completions(daemon, count: 1) == [#"{"result":"failed","run":13}"#])
        #expect(delegate.heard.isEmpty)
    }
}
