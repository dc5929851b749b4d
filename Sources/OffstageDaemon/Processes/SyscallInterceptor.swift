import Synchronization

/// Records the system calls of one `Syscalls` value and forces chosen ones to fail, so tests can drive the
/// error paths (a freeze write refused, a confirmation read failing) against real processes.
///
/// It is injected rather than global (unlike swift-system's thread-local mocking) because the calls happen on
/// several threads and tests run in parallel.
final class SyscallInterceptor: Sendable {
    /// One call as made: its name (`open`, `write`, `kill`, ...), what it acted on, and details such as the bytes
    /// written or the signal sent.
    struct Record: Sendable, Hashable, CustomStringConvertible {
        let call: String
        let target: String
        let detail: String

        var description: String { detail.isEmpty ? "\(call) \(target)" : "\(call) \(target) \(detail)" }
    }

    private struct Rule {
        let call: String
        let targetSuffix: String
        let detail: String?
        var remaining: Int?
        let outcome: Outcome
    }

    private enum Outcome {
        case fail(Int32)
        case read(String)
    }

    private struct State {
        var records: [Record] = []
        var rules: [Rule] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Every call so far, in order.
    var records: [Record] { state.withLock { $0.records } }

    /// Makes `call` on a target ending in `targetSuffix` (and with exactly `detail`, if given) fail with `errno`,
    /// `times` times or forever.
    func fail(_ call: String, targetSuffix: String = "", detail: String? = nil, errno: Int32, times: Int? = nil) {
        let rule = Rule(call: call, targetSuffix: targetSuffix, detail: detail, remaining: times, outcome: .fail(errno))
        state.withLock { $0.rules.append(rule) }
    }

    /// Makes reads of a file ending in `targetSuffix` return `text` instead of the real contents.
    func replaceRead(targetSuffix: String, with text: String, times: Int? = nil) {
        let rule = Rule(call: "read", targetSuffix: targetSuffix, detail: nil, remaining: times, outcome: .read(text))
        state.withLock { $0.rules.append(rule) }
    }

    /// Drops every failure and replacement; recording goes on.
    func removeRules() {
        state.withLock { $0.rules.removeAll() }
    }

    /// Records a call and returns the errno to fail it with, if a rule says so.
    func intercept(_ call: String, _ target: String, _ detail: String) -> Int32? {
        if case .fail(let code)? = consume(call, target, detail) { return code }
        return nil
    }

    /// Records a read and returns the replacement text, if a rule says so.
    func interceptRead(_ target: String) -> Result<String, Errno>? {
        switch consume("read", target, "") {
        case .fail(let code)?: return .failure(Errno(code))
        case .read(let text)?: return .success(text)
        case nil: return nil
        }
    }

    /// An errno as an `Error`, for `Result`.
    struct Errno: Error {
        let code: Int32
        init(_ code: Int32) { self.code = code }
    }

    private func consume(_ call: String, _ target: String, _ detail: String) -> Outcome? {
        state.withLock { state in
            state.records.append(Record(call: call, target: target, detail: detail))
            guard
                let index = state.rules.firstIndex(where: { rule in
                    rule.call == call && target.hasSuffix(rule.targetSuffix) && (rule.detail ?? detail) == detail
                        && rule.remaining != 0
                })
            else { return nil }
            if let remaining = state.rules[index].remaining {
                state.rules[index].remaining = remaining - 1
            }
            return state.rules[index].outcome
        }
    }
}
