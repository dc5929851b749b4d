import OffstageCore

/// An app's registered accessory, as the simulated shell watches it (SPEC MODE-4).
public struct AccessoryWatch: Hashable, Sendable {
    /// The app.
    public var app: AppID
    /// The app's name for the accessory.
    public var name: String
}

/// What a simulated accessory app does, and the accessories of the virtual device, through the same core inputs the
/// SDK and the daemon's accessory watcher use.
extension Simulation {
    /// Carries out one of the app's accessory steps; a refusal is recorded in ``errors``.
    mutating func accessoryStep(_ step: AppBehavior.Step, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            switch step {
            case .registerAccessory(let name, let path, let mode):
                let registration = AccessoryRegistration(name: name, path: path, mode: mode)
                perform(try core.registerAccessory(id, pid: pid, registration, present: pluggedAccessories.contains(path), at: now))
            case .openAccessorySession(let name):
                let token = nextSocketToken
                nextSocketToken += 1
                accessorySessions[token] = AccessoryWatch(app: id, name: name)
                do throws(CoreError) {
                    perform(try core.accessorySessionHandedOff(id, pid: pid, name: name, token: token, at: now))
                } catch {
                    accessorySessions[token] = nil
                    throw error
                }
            default:
                break
            }
        } catch {
            errors.append(error)
        }
    }

    /// An accessory is plugged in at `path` (the device node appears): every watch of it reports.
    public mutating func plugAccessory(at path: String) {
        pluggedAccessories.insert(path)
        reportPresence(of: path, true)
    }

    /// The accessory at `path` is unplugged: every watch of it reports.
    public mutating func unplugAccessory(at path: String) {
        pluggedAccessories.remove(path)
        reportPresence(of: path, false)
    }

    /// The accessory at `path` sends data: each watched session of it reports once (the daemon's watcher is
    /// one-shot); an app that runs reads its session itself.
    public mutating func accessorySendsData(at path: String) {
        let tokens = accessorySessions.filter { accessoryWatches[$0.value] == path }.keys.sorted()
        for token in tokens {
            guard let watch = accessorySessions[token], sockets[token]?.armed == true else { continue }
            sockets[token]?.armed = false
            perform(core.socketEvent(watch.app, token: token, closed: false, at: now))
        }
    }

    private mutating func reportPresence(of path: String, _ connected: Bool) {
        let watches = accessoryWatches.filter { $0.value == path }.keys.sorted { ($0.app, $0.name) < ($1.app, $1.name) }
        for watch in watches {
            perform(core.accessoryPresence(watch.app, name: watch.name, connected: connected, at: now))
        }
    }
}
