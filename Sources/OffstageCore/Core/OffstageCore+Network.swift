/// The user's data controls on the apps' own traffic (SPEC SET-2): which apps' sockets are blocked, decided at the
/// end of every input for the apps it touched (or for every app, when Data Saver or the network kind changed), and
/// handed to the shell as one batch.
extension OffstageCore {
    /// The restriction on an app's traffic as things stand now; nil when it may use the network (or is not
    /// installed).
    public func networkRestriction(of id: AppID, at now: Instant) -> NetworkRestriction? {
        guard let entry = apps[id] else { return nil }
        return networkRestriction(entry, dataSaver: device.settings.dataSaver, network: conditions(at: now).network)
    }

    func networkRestriction(_ entry: AppEntry, dataSaver: Bool, network: NetworkKind) -> NetworkRestriction? {
        let id = entry.app.id
        let audio = modes.audio.session(of: id)
        let userAudio = audio.map { $0.active && $0.playing && $0.startedByUser } ?? false
        return NetworkRestriction.applying(
            to: entry.app.settings, inFront: entry.process?.phase.isForeground == true, userAudio: userAudio,
            dataSaver: dataSaver, network: network)
    }

    /// Decides what the input changed for each app it touched (or for every app, when Data Saver or the network kind
    /// changed): its traffic restriction and its usage context, each emitted as one action.
    mutating func decidePerApp(_ now: Instant) {
        let inputs = NetworkInputs(dataSaver: device.settings.dataSaver, network: conditions(at: now).network)
        if inputs != networkInputs {
            networkInputs = inputs
            perAppStale.formUnion(apps.keys)
        }
        noteUse(now)
        decideUsage(now, metered: inputs.network == .metered)
        decideNetwork(inputs, now)
    }

    /// Decides the restrictions of the apps the input touched, and emits what changed as one action.
    mutating func decideNetwork(_ inputs: NetworkInputs, _ now: Instant) {
        guard !perAppStale.isEmpty else { return }
        var changes: [AppID: NetworkRestriction?] = [:]
        for id in perAppStale.sorted() {
            let restriction = apps[id].flatMap { networkRestriction($0, dataSaver: inputs.dataSaver, network: inputs.network) }
            guard network.set(id, restriction) else { continue }
            changes[id] = .some(restriction)
            if apps[id] != nil {
                log(now, id, .network, restriction.map { "blocked: \($0.description)" } ?? "allowed")
            }
        }
        perAppStale.removeAll(keepingCapacity: true)
        if !changes.isEmpty { emit(.network(NetworkRulesChange(changes))) }
    }
}

/// What every app's restriction depends on beside the app itself.
struct NetworkInputs: Hashable, Sendable {
    var dataSaver: Bool
    var network: NetworkKind
}
