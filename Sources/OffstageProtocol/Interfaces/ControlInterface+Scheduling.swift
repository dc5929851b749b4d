import OffstageCore

/// The wire types of scheduled work and device conditions in `io.offstage.Control` (SPEC SCH-6, SCH-8, SCH-9, SET-1).
/// Optionals are written as null rather than left out, so scripts can rely on every key being present.
extension ControlInterface {
    /// Conditions as the scheduler sees them.
    public struct Conditions: Codable, Hashable, Sendable {
        public var batteryLevel: Int
        public var charging: Bool
        public var network: String
        public var idle: Bool
        public var lowPowerMode: Bool
        /// normal, warning or critical.
        public var memoryPressure: String
        /// nominal, fair, serious or critical.
        public var thermalState: String

        public init(_ conditions: DeviceConditions) {
            batteryLevel = conditions.batteryLevel
            charging = conditions.charging
            network = conditions.network.rawValue
            idle = conditions.idle
            lowPowerMode = conditions.lowPowerMode
            memoryPressure = conditions.memoryPressure.rawValue
            thermalState = conditions.thermalState.rawValue
        }

        // A daemon from before memory pressure and the thermal state sends neither: they were normal and nominal.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            batteryLevel = try container.decode(Int.self, forKey: .batteryLevel)
            charging = try container.decode(Bool.self, forKey: .charging)
            network = try container.decode(String.self, forKey: .network)
            idle = try container.decode(Bool.self, forKey: .idle)
            lowPowerMode = try container.decode(Bool.self, forKey: .lowPowerMode)
            memoryPressure = try container.decodeIfPresent(String.self, forKey: .memoryPressure) ?? MemoryPressure.normal.rawValue
            thermalState = try container.decodeIfPresent(String.self, forKey: .thermalState) ?? ThermalState.nominal.rawValue
        }
    }

    /// The machine's reading.
    public struct Machine: Codable, Hashable, Sendable {
        public var batteryLevel: Int?
        public var charging: Bool?
        public var network: String?
        public var memoryPressure: String?
        public var thermalState: String?

        public init(_ reading: MachineReading) {
            batteryLevel = reading.batteryLevel
            charging = reading.charging
            network = reading.network?.rawValue
            memoryPressure = reading.memoryPressure?.rawValue
            thermalState = reading.thermalState?.rawValue
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(batteryLevel, forKey: .batteryLevel)
            try container.encode(charging, forKey: .charging)
            try container.encode(network, forKey: .network)
            try container.encode(memoryPressure, forKey: .memoryPressure)
            try container.encode(thermalState, forKey: .thermalState)
        }
    }

    /// Conditions set by hand.
    public struct Overrides: Codable, Hashable, Sendable {
        public var batteryLevel: Int?
        public var charging: Bool?
        public var network: String?
        public var idle: Bool?
        public var memoryPressure: String?
        public var thermalState: String?

        public init(_ overrides: ConditionOverrides) {
            batteryLevel = overrides.batteryLevel
            charging = overrides.charging
            network = overrides.network?.rawValue
            idle = overrides.idle
            memoryPressure = overrides.memoryPressure?.rawValue
            thermalState = overrides.thermalState?.rawValue
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(batteryLevel, forKey: .batteryLevel)
            try container.encode(charging, forKey: .charging)
            try container.encode(network, forKey: .network)
            try container.encode(idle, forKey: .idle)
            try container.encode(memoryPressure, forKey: .memoryPressure)
            try container.encode(thermalState, forKey: .thermalState)
        }
    }

    /// `GetDevice` and `SetDevice` reply.
    public struct DeviceReply: Codable, Hashable, Sendable {
        public var conditions: Conditions
        public var machine: Machine
        public var overrides: Overrides
        /// The device's time zone, an IANA name.
        public var timeZone: String
        public init(conditions: Conditions, machine: Machine, overrides: Overrides, timeZone: String) {
            self.conditions = conditions
            self.machine = machine
            self.overrides = overrides
            self.timeZone = timeZone
        }

        // A daemon from before time zones sends none: the device's zone was UTC then.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            conditions = try container.decode(Conditions.self, forKey: .conditions)
            machine = try container.decode(Machine.self, forKey: .machine)
            overrides = try container.decode(Overrides.self, forKey: .overrides)
            timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone) ?? "UTC"
        }
    }

    /// `SetDevice` parameters.
    public struct SetDeviceParameters: Codable, Hashable, Sendable {
        public var batteryLevel: Int?
        public var charging: Bool?
        public var network: String?
        public var idle: Bool?
        public var lowPowerMode: Bool?
        /// Names of conditions to return to the machine's reading.
        public var clear: [String]?
        /// The device's time zone, an IANA name.
        public var timeZone: String?
        /// Memory pressure set by hand: normal, warning or critical.
        public var memoryPressure: String?
        /// The thermal state set by hand: nominal, fair, serious or critical.
        public var thermalState: String?

        public init(
            batteryLevel: Int? = nil, charging: Bool? = nil, network: String? = nil, idle: Bool? = nil,
            lowPowerMode: Bool? = nil, clear: [String]? = nil, timeZone: String? = nil, memoryPressure: String? = nil,
            thermalState: String? = nil
        ) {
            self.batteryLevel = batteryLevel
            self.charging = charging
            self.network = network
            self.idle = idle
            self.lowPowerMode = lowPowerMode
            self.clear = clear
            self.timeZone = timeZone
            self.memoryPressure = memoryPressure
            self.thermalState = thermalState
        }

        /// The names `clear` accepts.
        public static let clearable = ["batteryLevel", "charging", "network", "idle", "memoryPressure", "thermalState"]

        /// `overrides` with these parameters applied: the cleared ones first, then the ones set (the core checks
        /// their ranges). All or nothing: the first name or value that is not one of its kind is refused.
        /// - Throws: `InvalidParameter` naming `clear`, `network`, `memoryPressure` or `thermalState`.
        public func overrides(applyingTo overrides: ConditionOverrides) throws(VarlinkError) -> ConditionOverrides {
            var overrides = overrides
            for name in clear ?? [] {
                switch name {
                case "batteryLevel": overrides.batteryLevel = nil
                case "charging": overrides.charging = nil
                case "network": overrides.network = nil
                case "idle": overrides.idle = nil
                case "memoryPressure": overrides.memoryPressure = nil
                case "thermalState": overrides.thermalState = nil
                default:
                    let valid = Self.clearable.joined(separator: ", ")
                    throw VarlinkError.invalidParameter("clear", description: "\(QuotedText.quote(name)) is not one of \(valid)")
                }
            }
            if let level = batteryLevel { overrides.batteryLevel = level }
            if let charging { overrides.charging = charging }
            if let network {
                guard let kind = NetworkKind(rawValue: network) else {
                    throw VarlinkError.invalidParameter("network", description: "must be none, unmetered or metered")
                }
                overrides.network = kind
            }
            if let idle { overrides.idle = idle }
            if let name = memoryPressure {
                guard let level = MemoryPressure(rawValue: name) else {
                    throw VarlinkError.invalidParameter(
                        "memoryPressure", description: "must be \(MemoryPressure.names); got \(QuotedText.quote(name))")
                }
                overrides.memoryPressure = level
            }
            if let name = thermalState {
                guard let state = ThermalState(rawValue: name) else {
                    throw VarlinkError.invalidParameter(
                        "thermalState", description: "must be \(ThermalState.names); got \(QuotedText.quote(name))")
                }
                overrides.thermalState = state
            }
            return overrides
        }
    }

    /// A hold on the wire.
    public struct HoldMessage: Codable, Hashable, Sendable {
        public var controller: String
        public var reason: String
        public var until: Double?

        public init(_ hold: Hold) {
            controller = hold.controller
            reason = hold.description
            until = hold.liftsAt?.secondsSinceEpoch
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(controller, forKey: .controller)
            try container.encode(reason, forKey: .reason)
            try container.encode(until, forKey: .until)
        }
    }

    /// One request on the wire; the field names are the CLI's JSON contract.
    public struct TaskMessage: Codable, Hashable, Sendable {
        public var app: String
        public var identifier: String
        public var kind: String
        public var state: String
        public var earliestBegin: Double?
        public var requiresNetwork: Bool
        public var requiresExternalPower: Bool
        public var submittedAt: Double
        public var plannedAt: Double?
        public var plannedReason: String?
        public var holds: [HoldMessage]
        public var startedAt: Double?
        public var expiresAt: Double?
        public var forced: Bool?
        public var summary: String
        /// Continued processing only (SPEC SCH-11): what the user sees, the progress, and why it is ending.
        public var title: String?
        public var subtitle: String?
        public var completed: Int64?
        public var total: Int64?
        public var endedBecause: String?

        public init(_ status: TaskStatus) {
            app = status.app.rawValue
            identifier = status.identifier
            kind = status.kind.rawValue
            state = status.state.rawValue
            earliestBegin = status.request.earliestBegin?.secondsSinceEpoch
            requiresNetwork = status.request.requiresNetwork
            requiresExternalPower = status.request.requiresExternalPower
            submittedAt = status.request.submittedAt.secondsSinceEpoch
            plannedAt = status.planned?.at?.secondsSinceEpoch
            plannedReason = status.planned?.reason
            holds = status.holds.map(HoldMessage.init)
            startedAt = status.run?.startedAt.secondsSinceEpoch
            expiresAt = status.run?.expiresAt.secondsSinceEpoch
            forced = status.run?.forced
            summary = status.summary
            title = status.run?.progress?.title ?? status.request.continued?.title
            subtitle = status.run?.progress?.subtitle ?? status.request.continued?.subtitle
            completed = status.run?.progress?.completed ?? status.request.continued.map { _ in 0 }
            total = status.run?.progress?.total ?? status.request.continued.map { _ in 0 }
            endedBecause = status.run?.endedBecause
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(identifier, forKey: .identifier)
            try container.encode(kind, forKey: .kind)
            try container.encode(state, forKey: .state)
            try container.encode(earliestBegin, forKey: .earliestBegin)
            try container.encode(requiresNetwork, forKey: .requiresNetwork)
            try container.encode(requiresExternalPower, forKey: .requiresExternalPower)
            try container.encode(submittedAt, forKey: .submittedAt)
            try container.encode(plannedAt, forKey: .plannedAt)
            try container.encode(plannedReason, forKey: .plannedReason)
            try container.encode(holds, forKey: .holds)
            try container.encode(startedAt, forKey: .startedAt)
            try container.encode(expiresAt, forKey: .expiresAt)
            try container.encode(forced, forKey: .forced)
            try container.encode(summary, forKey: .summary)
            try container.encode(title, forKey: .title)
            try container.encode(subtitle, forKey: .subtitle)
            try container.encode(completed, forKey: .completed)
            try container.encode(total, forKey: .total)
            try container.encode(endedBecause, forKey: .endedBecause)
        }
    }

    /// A continued-processing task in `offstage apps` (SPEC SCH-11).
    public struct ContinuedTaskMessage: Codable, Hashable, Sendable {
        public var identifier: String
        /// queued, running or ending
        public var state: String
        public var title: String
        public var subtitle: String
        public var completed: Int64
        public var total: Int64
        public var endedBecause: String?

        public init(_ view: ContinuedTaskView) {
            identifier = view.identifier
            state = view.state.rawValue
            title = view.title
            subtitle = view.subtitle
            completed = view.completed
            total = view.total
            endedBecause = view.endedBecause
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(identifier, forKey: .identifier)
            try container.encode(state, forKey: .state)
            try container.encode(title, forKey: .title)
            try container.encode(subtitle, forKey: .subtitle)
            try container.encode(completed, forKey: .completed)
            try container.encode(total, forKey: .total)
            try container.encode(endedBecause, forKey: .endedBecause)
        }
    }

    /// `CancelTask` reply: what happened, for people.
    public struct CancelTaskReply: Codable, Hashable, Sendable {
        public var message: String
        public init(message: String) { self.message = message }
    }

    /// `Tasks` parameters.
    public struct TasksParameters: Codable, Hashable, Sendable {
        public var app: String?
        public init(app: String? = nil) { self.app = app }
    }

    /// `Tasks` reply.
    public struct TasksReply: Codable, Hashable, Sendable {
        public var tasks: [TaskMessage]
        public init(tasks: [TaskMessage]) { self.tasks = tasks }
    }

    /// `Explain`, `RunTask` and `ExpireTask` parameters.
    public struct TaskParameters: Codable, Hashable, Sendable {
        public var app: String
        public var identifier: String?
        public init(app: String, identifier: String? = nil) {
            self.app = app
            self.identifier = identifier
        }
    }

    /// `Explain` reply.
    public struct ExplainReply: Codable, Hashable, Sendable {
        public var tasks: [TaskMessage]
        /// The app's background transfers (none when one identifier was asked for).
        public var transfers: [TransferExplanationMessage]
        public var conditions: Conditions
        public var modeHolds: [String]
        public var suspendedBecause: String?
        public init(
            tasks: [TaskMessage], transfers: [TransferExplanationMessage] = [], conditions: Conditions, modeHolds: [String] = [],
            suspendedBecause: String? = nil
        ) {
            self.tasks = tasks
            self.transfers = transfers
            self.conditions = conditions
            self.modeHolds = modeHolds
            self.suspendedBecause = suspendedBecause
        }
    }

    /// One background transfer in an `Explain` reply: where it stands and, while it waits, why.
    public struct TransferExplanationMessage: Codable, Hashable, Sendable {
        public var id: UInt64
        public var session: String
        public var kind: String
        public var url: String
        public var state: String
        public var bytesDone: Int64
        public var bytesExpected: Int64?
        public var holds: [HoldMessage]
        public var summary: String

        public init(_ explanation: TransferExplanation) {
            id = explanation.task.id
            session = explanation.task.session
            kind = explanation.task.request.kind.rawValue
            url = explanation.task.request.url
            state = explanation.task.state.rawValue
            bytesDone = explanation.task.bytesDone
            bytesExpected = explanation.task.bytesExpected
            holds = explanation.holds.map(HoldMessage.init)
            summary = explanation.summary
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(session, forKey: .session)
            try container.encode(kind, forKey: .kind)
            try container.encode(url, forKey: .url)
            try container.encode(state, forKey: .state)
            try container.encode(bytesDone, forKey: .bytesDone)
            try container.encode(bytesExpected, forKey: .bytesExpected)
            try container.encode(holds, forKey: .holds)
            try container.encode(summary, forKey: .summary)
        }
    }
}
