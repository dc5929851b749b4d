import OffstageCore

/// An app's accessory, by the app and the name it gave it.
struct AccessoryKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    var app: AppID
    var name: String

    static func < (lhs: AccessoryKey, rhs: AccessoryKey) -> Bool { (lhs.app, lhs.name) < (rhs.app, rhs.name) }

    var description: String { "accessory '\(name)' of \(app)" }
}

/// What the model's shell knows of accessories (SPEC MODE-4), as the daemon's accessory watcher does: the paths it
/// watches for the core, where an accessory is plugged in, and the sessions the apps handed off.
struct ModelAccessories: Hashable, Sendable {
    /// Paths where an accessory is plugged in.
    var plugged: Set<String> = []
    /// The accessories the core asked the shell to watch, with their paths.
    var watches: [AccessoryKey: String] = [:]
    /// Accessory sessions by token, with their app; whether each is watched is in the shell's `sockets`, with the
    /// VoIP sockets, since the core watches both with the same action.
    var sessions: [UInt64: AppID] = [:]
    /// Watches that have not made their first report yet: a watch reports at once whether its path exists.
    var owedReports: [AccessoryKey] = []

    /// The core asked to watch `key` at `path` (replacing a watch of that name).
    mutating func watch(_ key: AccessoryKey, at path: String) {
        watches[key] = path
        owedReports.append(key)
    }
}

extension ModelShell {
    /// Carries out one accessory command: the app registering or handing off a session, the accessory coming and
    /// going or sending data, the debug verb.
    mutating func applyAccessory(_ command: ModelCommand, slot: Int) {
        let id = ModelWorld.app(slot)
        let name = ModelWorld.accessoryName
        let path = ModelWorld.accessoryPath(slot)
        switch command {
        case .registerAccessory(_, let mode):
            guard let process = running(slot) else { return }
            let registration = AccessoryRegistration(name: name, path: path, mode: mode)
            let present = accessories.plugged.contains(path)
            feed { core, now throws(CoreError) in
                try core.registerAccessory(id, pid: process.pid, registration, present: present, at: now)
            }
        case .openSession:
            guard let process = running(slot) else { return }
            let token = nextSocketToken
            nextSocketToken += 1
            accessories.sessions[token] = id
            let accepted = feed { core, now throws(CoreError) in
                try core.accessorySessionHandedOff(id, pid: process.pid, name: name, token: token, at: now)
            }
            // Refused (no such accessory): the shell closes the session itself.
            if !accepted { accessories.sessions[token] = nil }
        case .plug(_, let on):
            // The watcher reports changes only: plugging in what is plugged in says nothing.
            let changed = on ? accessories.plugged.insert(path).inserted : accessories.plugged.remove(path) != nil
            guard changed else { return }
            for key in accessories.watches.filter({ $0.value == path }).keys.sorted() where violation == nil {
                feed { core, now throws(CoreError) in
                    core.accessoryPresence(key.app, name: key.name, connected: on, at: now)
                }
            }
        case .accessoryData(_, let closed):
            // A watched session reports once (epoll's one-shot), as a VoIP socket does.
            let session = accessories.sessions.filter { $0.value == id }.keys.min()
            guard let token = session, sockets[token]?.armed == true else { return }
            sockets[token]?.armed = false
            feed { core, now throws(CoreError) in core.socketEvent(id, token: token, closed: closed, at: now) }
        case .simulateAccessory(_, let event):
            feed { core, now throws(CoreError) in try core.simulateAccessoryEvent(id, name: name, event, at: now) }
        default:
            break
        }
    }

    /// Makes the first report of each new watch: whether its path exists now.
    mutating func reportOwedPresence() {
        while violation == nil, !accessories.owedReports.isEmpty {
            let key = accessories.owedReports.removeFirst()
            guard let path = accessories.watches[key] else { continue }
            let connected = accessories.plugged.contains(path)
            feed { core, now throws(CoreError) in
                core.accessoryPresence(key.app, name: key.name, connected: connected, at: now)
            }
        }
    }
}
