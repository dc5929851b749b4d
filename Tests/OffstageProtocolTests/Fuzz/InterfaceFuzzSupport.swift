import Foundation
import OffstageCore

@testable import OffstageProtocol

/// What the interface fuzz targets share (`modes`, `modes-control`, `control-explain`, `transfers-control`,
/// `push-control`, `notifications-control`, `hand-off`; SPEC §11: malformed input on every interface gets a clear error
/// and changes nothing): the cores an input goes to, the decoding of a call as the daemon decodes it, and the checks of
/// a refusal and of what an accepted call left.
///
/// Each target's checks take one Varlink message through the codec and the wire types into a real `OffstageCore`, the
/// way the daemon's service for that interface takes it, in each of ``cores``. Compiled into this test target (each
/// target's regression tests replay its committed inputs) and by `scripts/fuzz` beside the target's own checks. It
/// imports only Foundation and the modules under test.
enum InterfaceFuzz {
    /// A property that did not hold, in words.
    struct Violation: Error, CustomStringConvertible {
        var description: String

        init(_ description: String) { self.description = description }
    }

    /// How far an input went, in the core where it went furthest.
    enum Outcome: Int, Comparable {
        /// Not a call the codec reads, or not one of the interface's methods.
        case notACall
        /// Its parameters are not the method's: InvalidParameter naming one.
        case refusedParameters
        /// The wire types' conversion or the core refused it with a clear error, changing nothing.
        case refused
        /// Accepted, and what it did keeps the target's properties.
        case accepted

        static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// The app under test: it declares every long-running mode, fetch and a refresh task.
    static let app: AppID = "com.example.fuzz"
    /// Another app, running, that declares nothing.
    static let other: AppID = "com.example.other"
    /// An app that is installed and not running.
    static let stopped: AppID = "com.example.stopped"
    static let pid: Int32 = 4242
    static let otherPid: Int32 = 4243
    static let now = Instant(secondsSinceEpoch: 1_800_000_000.125)
    /// The app's delivered notification, its pending one, its refresh task and its accessory.
    static let delivered = "tea"
    static let pendingNotification = "later"
    static let refresh = "com.example.fuzz.refresh"
    static let accessory = "scanner"
    /// The shell's token for the socket the app handed off.
    static let socketToken: UInt64 = 7

    /// The cores every input goes to, each with its time: the app in front of the user; a minute after it went to the
    /// background (its audio and location keep it running); and a minute after those stopped, the app suspended and
    /// the device locked. In each, the app has a VoIP keep-alive, a registered accessory,
    /// a playing audio session, location updates, a delivered and a pending notification, a refresh task and a
    /// transfer; the other app runs in the background with a transfer of its own.
    static let cores: [(core: OffstageCore, now: Instant)] = {
        let earlier = now - .seconds(120)
        var core = OffstageCore()
        /// The apps answer every callback and complete every task run at once, as live ones do (else the watchdog
        /// ends them).
        func settle(at time: Instant) {
            for _ in 0..<32 {
                var answered = false
                for (id, pid) in [(app, pid), (other, otherPid)] {
                    guard let process = core.apps[id]?.process else { continue }
                    if let callback = process.inFlight {
                        _ = core.callbackCompleted(id, pid: pid, callback: callback.id, at: time)
                        answered = true
                    }
                    for run in process.runs where run.progress == nil {
                        _ = try? core.completeTask(id, pid: pid, run: run.id, result: .noData, at: time)
                        answered = true
                    }
                }
                guard answered else { return }
            }
        }
        /// Time passes a second at a time, the apps answering as it does.
        var clock = earlier
        func pass(to end: Instant) {
            while clock < end {
                clock = min(clock + .seconds(1), end)
                _ = core.advance(to: clock)
                settle(at: clock)
            }
        }
        let every: Set<BackgroundMode> = [.audio, .location, .voip, .fetch, .processing, .externalAccessory, .bluetoothCentral]
        for (id, modes) in [(app, every), (other, Set<BackgroundMode>()), (stopped, Set<BackgroundMode>())] {
            let manifest = Manifest(
                id: id, executable: "Fuzz", backgroundModes: modes, permittedTaskIdentifiers: ["\(id).refresh", "\(id).export.*"])
            core.restore(InstalledApp(manifest: manifest, bundlePath: "/b", installedAt: earlier, settings: .init()), durable: AppDurableState())
        }
        // Both processes were running before this daemon and attach to it, as a restarted daemon's apps do.
        let attach = #"{"launchCompleted":true,"state":"background","openTasks":[],"continuedTasks":[]}"#
        let report = try! JSONDecoder().decode(AttachReport.self, from: Data(attach.utf8))
        for (id, pid) in [(app, pid), (other, otherPid)] {
            _ = core.adopt(id, pid: pid, at: earlier)
            _ = try! core.attached(id, pid: pid, report: report, at: earlier)
        }
        func notification(_ identifier: String, after seconds: Double) -> NotificationRequest {
            let json = #"{"identifier":"\#(identifier)","content":{"title":"Tea","body":"Ready"},"#
                + #""trigger":{"kind":"timeInterval","seconds":\#(seconds)}}"#
            return try! JSONDecoder().decode(NotificationsInterface.RequestMessage.self, from: Data(json.utf8)).request()
        }
        _ = try! core.addNotification(app, pid: pid, notification(delivered, after: 60), at: earlier)
        _ = try! core.addNotification(app, pid: pid, notification(pendingNotification, after: 86_400), at: earlier)
        pass(to: now)
        _ = try! core.open(app, at: now)
        settle(at: now)
        _ = try! core.setKeepAliveTimeout(app, pid: pid, seconds: 600, at: now)
        _ = try! core.socketHandedOff(app, pid: pid, token: socketToken, at: now)
        let registration = AccessoryRegistration(name: accessory, path: "/dev/ttyACM0", mode: .externalAccessory)
        _ = try! core.registerAccessory(app, pid: pid, registration, present: true, at: now)
        let audio = AudioSessionRequest(category: .playback, mixWithOthers: false, active: true)
        _ = try! core.setAudioSession(app, pid: pid, audio, at: now)
        _ = try! core.setAudioPlaying(app, pid: pid, playing: true, at: now)
        let location = LocationRequest(desiredAccuracy: 10, distanceFilter: 5, allowsBackground: true)
        _ = try! core.startUpdatingLocation(app, pid: pid, location, at: now)
        _ = try! core.submitTask(app, pid: pid, request: TaskRequest(identifier: refresh, kind: .appRefresh, submittedAt: now), at: now)
        for (id, pid) in [(app, pid), (other, otherPid)] {
            _ = try! core.openTransferSession(id, pid: pid, identifier: "com.example.downloads", configuration: .init(), at: now)
            let request = TransferRequest(kind: .download, url: "https://files.example.com/\(id).bin", filename: "")
            _ = try! core.createTransfer(id, pid: pid, session: "com.example.downloads", request: request, at: now)
        }
        // A background push for the other app, so that it has a budget of pushes that wake it (SPEC NT-4).
        let push = RemotePush(
            id: "push-1", app: other, type: .background, priority: 5, acceptedAt: now, aps: PushAPS(contentAvailable: true),
            payload: #"{"aps":{"content-available":1}}"#)
        _ = core.pushArrived(push, at: now)
        settle(at: now)
        let front = core
        _ = core.home(at: now)
        settle(at: now)
        let later = now + .seconds(60)
        pass(to: later)
        let back = core
        // The app stops its audio and location, so nothing holds it: it is suspended, and the user locks the device.
        _ = try! core.setAudioPlaying(app, pid: pid, playing: false, at: later)
        _ = try! core.stopUpdatingLocation(app, pid: pid, at: later)
        let last = later + .seconds(60)
        pass(to: last)
        _ = core.lock(at: last)
        settle(at: last)
        return [(front, now), (back, later), (core, last)]
    }()

    /// The call in `bytes`, if the codec reads one and it is a method of `interface`.
    static func call(_ bytes: [UInt8], of interface: String) -> VarlinkReceivedCall? {
        guard let call = try? VarlinkCodec.decodeCall(Data(bytes)), call.header.method.hasPrefix(interface + "."),
            !call.header.method.dropFirst(interface.count + 1).contains(".")
        else { return nil }
        return call
    }

    /// The call's parameters as `type`, or nil when they are refused as InvalidParameter naming one (as they must be).
    static func parameters<P: Decodable>(_ call: VarlinkReceivedCall, as type: P.Type) throws(Violation) -> P? {
        do throws(VarlinkError) {
            return try call.decodeParameters(as: type)
        } catch {
            _ = try refusedParameter(error, of: call.header.method)
            return nil
        }
    }

    /// A conversion's refusal: InvalidParameter naming the field.
    static func refusedParameter(_ error: VarlinkError, of method: String) throws(Violation) -> Outcome {
        guard error.name == VarlinkError.Name.invalidParameter, let named = error.stringParameter("parameter"), !named.isEmpty else {
            throw Violation("\(method) refused as \(error), not InvalidParameter naming one")
        }
        return .refusedParameters
    }

    /// The reply can be sent: it encodes as JSON (no NaN or infinity).
    static func reply<R: Encodable>(_ reply: R, of method: String) throws(Violation) {
        do {
            _ = try VarlinkCodec.encodeReply(reply)
        } catch {
            throw Violation("the reply to \(method) cannot be encoded: \(error)")
        }
    }

    /// What apps and the user can see of a core, compared before and after a refused call.
    struct Visible: Equatable {
        var apps: [AppID: AppEntry]
        var device: DeviceState
        var modes: BackgroundModes
        var notifications: NotificationSchedule
        var pushes: PushInbox
        var transfers: TransferQueue

        init(_ core: OffstageCore) {
            apps = core.apps
            device = core.device
            modes = core.modes
            notifications = core.notifications
            pushes = core.pushes
            transfers = core.transfers
        }
    }

    /// Runs one call's way into a copy of `start`: `body` converts and decides, throwing a `CoreError` to refuse (or a
    /// ``Violation``). A refusal must have a code in `allowed` (nil: any, where the service answers the ones its
    /// interface does not declare with one it does), a message and a fix, and change nothing; an accepted call must
    /// leave state that can be saved (``checkSavable(_:after:)``).
    static func run(
        _ method: String, in start: OffstageCore, allowed: Set<CoreError.Code>?, _ body: (inout OffstageCore) throws -> Void
    ) throws(Violation) -> Outcome {
        var core = start
        do {
            try body(&core)
        } catch let violation as Violation {
            throw violation
        } catch let error as CoreError {
            guard allowed?.contains(error.code) ?? true, !error.message.isEmpty, !error.fix.isEmpty else {
                throw Violation("\(method) refused with \(error.code), or without a message or a fix: \(error)")
            }
            guard Visible(core) == Visible(start) else { throw Violation("a refused \(method) changed the core: \(error)") }
            return .refused
        } catch {
            throw Violation("\(method) threw \(error)")
        }
        try checkSavable(core, after: method)
        return .accepted
    }

    /// Every app's durable state and the device's encode as JSON: no NaN or infinity, nothing JSON cannot carry, got
    /// into what the daemon saves.
    static func checkSavable(_ core: OffstageCore, after method: String) throws(Violation) {
        let encoder = JSONEncoder()
        do {
            _ = try encoder.encode(core.device)
            for entry in core.apps.values { _ = try encoder.encode(entry.durable) }
        } catch {
            throw Violation("after \(method) the core holds state that cannot be saved: \(error)")
        }
    }

    /// The core's errors an interface declares (its `error` lines): the daemon answers a core error with the error of
    /// the same name in the interface called, so a refusal with any other would reach the caller undeclared.
    static func declaredErrors(_ definition: String) -> Set<CoreError.Code> {
        let names = definition.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(whereSeparator: { $0 == " " || $0 == "(" })
            return words.count >= 2 && words[0] == "error" ? String(words[1]) : nil
        }
        return Set(names.compactMap(CoreError.Code.init(rawValue:)))
    }

    /// The app a user's call names, as the daemon reads it: an app id (the core says whether it is installed).
    static func appID(_ text: String) throws(CoreError) -> AppID {
        guard let id = AppID.validated(text) else {
            throw CoreError(.invalidArgument, "\(QuotedText.quote(text)) is not an app id", fix: "use the CFBundleIdentifier")
        }
        return id
    }

    /// The installed app a user's call names, where the daemon checks that it is installed before the core is asked.
    static func installedApp(_ text: String, in core: OffstageCore) throws(CoreError) -> AppID {
        let id = try appID(text)
        guard core.apps[id] != nil else { throw CoreError.notInstalled(id) }
        return id
    }

    /// A target's checks: the call in `bytes`, if it is one of `interface`'s methods (of `methods`, when given), taken
    /// by `check` into each of ``cores``; how far it went in any.
    static func check(
        _ bytes: [UInt8], of interface: String, methods: Set<String>? = nil,
        _ check: (VarlinkReceivedCall, OffstageCore, Instant) throws(Violation) -> Outcome
    ) throws(Violation) -> Outcome {
        guard let call = call(bytes, of: interface), methods?.contains(call.header.method) ?? true else { return .notACall }
        return try each { core, now throws(Violation) in try check(call, core, now) }
    }

    /// The checks of a target against each of ``cores``, as far as the input went in any.
    static func each(_ check: (OffstageCore, Instant) throws(Violation) -> Outcome) throws(Violation) -> Outcome {
        var furthest = Outcome.notACall
        for (core, now) in cores { furthest = max(furthest, try check(core, now)) }
        return furthest
    }
}
