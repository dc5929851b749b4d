import Foundation
import Glibc
import OffstageCore
import OffstageHost
import OffstageProtocol
import OffstageSimulator

/// Descriptors the app hands off (SPEC MODE-2, MODE-4), its VoIP socket and its accessory sessions, and its accessories'
/// paths. As the daemon does,
/// the kit checks what the descriptor is, keeps a copy, and watches the copy while the core says so — for real, with
/// `poll`: bytes the test writes to the other end wake the app, a hang-up says the connection closed. Nothing is read.
extension KitHost {
    /// Answers a call of the hand-off socket with the app's descriptor `fd` (which the app keeps).
    func handOff(_ fd: Int32, call message: Data) -> Data {
        do throws(VarlinkError) {
            let call = try VarlinkCodec.decodeCall(message)
            let parameters = (try? call.decodeParameters(as: JSONValue.self)) ?? .null
            let reply = try handOff(fd, try ModesInterface.HandOffCall(method: call.header.method, parameters: parameters))
            return (try? VarlinkCodec.encodeReply(reply))
                ?? VarlinkCodec.encodeError(VarlinkError.internalError(reason: "the hand-off's reply did not encode"))
        } catch {
            return VarlinkCodec.encodeError(error)
        }
    }

    private func handOff(_ fd: Int32, _ call: ModesInterface.HandOffCall) throws(VarlinkError) -> any Encodable & Sendable {
        let reply: any Encodable & Sendable
        var accessory: String?
        switch call {
        case .socket:
            let socket = try HandOffChecks.socket(fd)
            reply = ModesInterface.HandOffReply(kind: socket.kind.rawValue, domain: socket.domainName)
        case .accessorySession(let name):
            reply = ModesInterface.HandOffAccessorySessionReply(kind: try HandOffChecks.accessorySession(fd))
            accessory = name
        }
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            throw HandOffChecks.invalid("fd \(fd) cannot be duplicated (errno \(errno))", fix: "hand off an open descriptor")
        }
        return try state.withLock { state throws(VarlinkError) in
            state.calls += 1
            guard let current = state.current else {
                Glibc.close(copy)
                throw CoreError(.appNotRunning, "the app's process is not running on the test device", fix: "hand off from the app's code")
                    .varlink(in: ModesInterface.name)
            }
            do throws(VarlinkError) {
                let token = try ModeCalls.refusing { () throws(CoreError) in
                    try state.simulation.externalHandedOff(current.pid, accessory: accessory)
                }
                state.handedOff[token] = HandedOff(fd: copy)
                return reply
            } catch {
                Glibc.close(copy)
                throw error
            }
        }
    }

    /// Looks at every handed-off descriptor the core has the shell watch, as the daemon's watcher does: one that is
    /// readable or hung up is reported once (until the core stops and starts watching it again); descriptors the
    /// core let go of are closed. Returns whether anything was reported.
    func watchHandedOff() -> Bool {
        state.withLock { state in
            var reported = false
            for (token, handedOff) in state.handedOff.sorted(by: { $0.key < $1.key }) {
                guard let socket = state.simulation.sockets[token] else {
                    Glibc.close(handedOff.fd)
                    state.handedOff[token] = nil
                    continue
                }
                guard socket.armed else {
                    state.handedOff[token]?.fired = false
                    continue
                }
                guard !handedOff.fired, let closed = Self.event(on: handedOff.fd) else { continue }
                state.handedOff[token]?.fired = true
                state.simulation.externalSocketEvent(token: token, closed: closed)
                reported = true
            }
            return reported
        }
    }

    /// Looks at the path of every registered accessory, as the daemon's path watcher does: one that appeared or went
    /// since the last look is reported plugged in or unplugged. Returns whether anything changed.
    func watchAccessories() -> Bool {
        state.withLock { state in
            Set(state.simulation.accessoryWatches.values).sorted().reduce(false) { changed, path in
                Self.lookAt(path, &state.simulation) || changed
            }
        }
    }

    /// Brings the device's view of `path` up to date with the file system; returns whether it changed.
    @discardableResult
    static func lookAt(_ path: String, _ simulation: inout Simulation) -> Bool {
        let present = AccessoryCalls.isPresent(path)
        guard present != simulation.pluggedAccessories.contains(path) else { return false }
        if present { simulation.plugAccessory(at: path) } else { simulation.unplugAccessory(at: path) }
        return true
    }

    /// Closes every descriptor the kit kept.
    func closeHandedOff() {
        state.withLock { state in
            for handedOff in state.handedOff.values { Glibc.close(handedOff.fd) }
            state.handedOff = [:]
        }
    }

    /// Whether `fd` has something to report now: nil for nothing, true for a hang-up (which wins over data, as the
    /// daemon's watcher says), false for data to read.
    private static func event(on fd: Int32) -> Bool? {
        var entry = pollfd(fd: fd, events: Int16(POLLIN) | pollReadHangUp, revents: 0)
        guard poll(&entry, 1, 0) == 1 else { return nil }
        let hangUp = pollReadHangUp | Int16(POLLHUP) | Int16(POLLERR)
        return entry.revents & hangUp != 0
    }
}

/// `POLLRDHUP` (Linux, `<poll.h>` with `_GNU_SOURCE`, which Glibc's module does not show): the peer closed its end
/// for writing, reported even when no data is left to read.
private let pollReadHangUp: Int16 = 0x2000

/// A descriptor the app handed off, as the kit keeps it.
struct HandedOff {
    /// The kit's copy.
    var fd: Int32
    /// Reported since the core last armed it: not reported again until it is disarmed and armed (a one-shot watch).
    var fired = false
}
