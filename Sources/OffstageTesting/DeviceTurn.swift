import Foundation
import Synchronization

/// Whose turn it is to use the process's SDK: one ``TestDevice`` at a time, the others waiting in line.
final class DeviceTurn: Sendable {
    static let shared = DeviceTurn()

    private let state = Mutex<(taken: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Waits for the turn. A wait of more than 30 s is said on standard error: a test that holds two devices at once
    /// waits for itself.
    func take() async {
        let warning = Task {
            try await Task.sleep(for: .seconds(30))
            FileHandle.standardError.write(
                Data(
                    ("OffstageTesting: a TestDevice has waited 30 s for another to be released; a test that keeps two "
                        + "devices alive at once waits forever (the SDK is one per process): release the first\n").utf8))
        }
        defer { warning.cancel() }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.taken {
                    state.waiting.append(continuation)
                    return false
                }
                state.taken = true
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Gives the turn to the next in line.
    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.taken = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
