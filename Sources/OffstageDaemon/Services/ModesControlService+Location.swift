import OffstageCore
import OffstageProtocol

/// The location methods of `io.offstage.ModesControl` (SPEC MODE-3): show the source and who listens, and switch
/// sources. Every method replies with the state afterwards; on an error nothing changes.
extension ModesControlService {
    var locationMethods: [String: VarlinkMethodHandler] {
        [
            "Location": { context, _, responder in
                try engine.requireUser(context)
                responder.reply(engine.locationReply())
            },
            "ReplayTrack": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ModesControlInterface.ReplayTrackParameters.self)
                try engine.replayTrack(parameters, responder: responder)
            },
            "SetLocation": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ModesControlInterface.SetLocationParameters.self)
                try engine.switchLocation { service throws(LocationServiceError) in
                    try service.set(latitude: parameters.latitude, longitude: parameters.longitude, accuracy: parameters.accuracy)
                }
                responder.reply(engine.locationReply())
            },
            "UseGpsd": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ModesControlInterface.UseGpsdParameters.self)
                try engine.switchLocation { service throws(LocationServiceError) in
                    try service.useGpsd(host: parameters.host, port: parameters.port)
                }
                responder.reply(engine.locationReply())
            },
        ]
    }
}

extension DaemonEngine {
    /// Switches the location source, turning a refusal into the interface's error.
    func switchLocation(_ body: (LocationService) throws(LocationServiceError) -> Void) throws(VarlinkError) {
        guard let location else { throw VarlinkError.internalError(reason: "the location service has not started") }
        do {
            try body(location)
        } catch {
            switch error {
            case .badTrack(let problem):
                let name = "\(ModesControlInterface.name).BadTrack"
                // The message names the file and the line, so the CLI's one line says where.
                let place = problem.line.map { "\(problem.file) line \($0)" } ?? problem.file
                var parameters: [String: JSONValue] = [
                    "file": .string(problem.file), "message": .string("\(place): \(problem.problem)"),
                    "fix": .string(problem.fix),
                ]
                if let line = problem.line { parameters["line"] = .number(Double(line)) }
                throw VarlinkError(name, parameters: parameters)
            case .invalid(let message, let fix):
                throw CoreError(.invalidArgument, message, fix: fix).varlink(in: ModesControlInterface.name)
            }
        }
    }

    /// Replays the track the user named: the numbers are checked on the loop, the file is read and parsed on the
    /// location service's reader thread (it may be large, or a device that never ends: ``TrackFile``), and the reply
    /// comes when it is.
    /// Other calls are answered meanwhile.
    func replayTrack(
        _ parameters: ModesControlInterface.ReplayTrackParameters, responder: VarlinkResponder
    ) throws(VarlinkError) {
        guard let location else { throw VarlinkError.internalError(reason: "the location service has not started") }
        try switchLocation { service throws(LocationServiceError) in
            _ = try service.replaySettings(speed: parameters.speed, loop: parameters.loop)
        }
        location.trackReader.runIfActive(eventLoop: eventLoop) { () throws -> Void in
            try location.replay(path: parameters.path, speed: parameters.speed, loop: parameters.loop)
        }.whenComplete { [self] result in
            do throws(VarlinkError) {
                try switchLocation { _ throws(LocationServiceError) in
                    switch result {
                    case .success: return
                    case .failure(let error as LocationServiceError): throw error
                    case .failure(let error):
                        throw .invalid("cannot read the track \(parameters.path): \(error)", fix: "give the path of a GPX or NMEA file")
                    }
                }
                responder.reply(locationReply())
            } catch {
                responder.fail(error)
            }
        }
    }

    /// The location source, its last fix and every app that listens, with the location mode's verdict on each.
    func locationReply() -> ModesControlInterface.LocationReply {
        let component = core.modes.location
        let now = self.now
        let (kind, source, status) = location?.snapshot ?? (.none, "none", LocationService.noSourceStatus)
        let apps = component.listeners.sorted().map { id in
            ModesControlInterface.LocationAppMessage(
                app: id, updating: component.updating[id], significantChanges: component.significant[id] != nil,
                hold: core.modeHolds(of: id, at: now).first { $0.mode == .location })
        }
        return ModesControlInterface.LocationReply(
            kind: kind.rawValue, source: source, status: status, lastFix: component.lastFix.map(AppInterface.LocationMessage.init),
            apps: apps)
    }
}
