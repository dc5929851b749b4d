import OffstageCore

/// The wire types of scheduled work in `io.offstage.App` (SPEC SCH-1..4).
extension AppInterface {
    /// A request on the wire.
    public struct TaskRequestMessage: Codable, Hashable, Sendable {
        public var identifier: String
        /// `refresh` or `processing`.
        public var kind: String
        /// Seconds since the Unix epoch.
        public var earliestBegin: Double?
        public var requiresNetwork: Bool?
        public var requiresExternalPower: Bool?
        /// Continued processing only (SPEC SCH-11).
        public var title: String?
        public var subtitle: String?
        /// `queue` (the default) or `fail`.
        public var strategy: String?

        public init(
            identifier: String, kind: String, earliestBegin: Double? = nil, requiresNetwork: Bool? = nil,
            requiresExternalPower: Bool? = nil, title: String? = nil, subtitle: String? = nil, strategy: String? = nil
        ) {
            self.identifier = identifier
            self.kind = kind
            self.earliestBegin = earliestBegin
            self.requiresNetwork = requiresNetwork
            self.requiresExternalPower = requiresExternalPower
            self.title = title
            self.subtitle = subtitle
            self.strategy = strategy
        }

        /// The wire form of a pending request.
        public init(_ request: TaskRequest) {
            self.init(
                identifier: request.identifier, kind: request.kind.rawValue,
                earliestBegin: request.earliestBegin?.secondsSinceEpoch, requiresNetwork: request.requiresNetwork,
                requiresExternalPower: request.requiresExternalPower, title: request.continued?.title,
                subtitle: request.continued?.subtitle, strategy: request.continued?.strategy.rawValue)
        }

        /// The core request, or a description of what is wrong with it.
        public func request(submittedAt now: Instant) -> Result<TaskRequest, InvalidField> {
            guard let kind = TaskKind(rawValue: kind), kind != .fetch else {
                return .failure(InvalidField(name: "kind", description: "must be refresh, processing or continued"))
            }
            var details: ContinuedTaskDetails?
            if kind == .continued {
                guard let title else {
                    return .failure(InvalidField(name: "title", description: "is required for a continued-processing request"))
                }
                var strategy = ContinuedTaskDetails.Strategy.queue
                if let name = self.strategy {
                    guard let value = ContinuedTaskDetails.Strategy(rawValue: name) else {
                        return .failure(InvalidField(name: "strategy", description: "must be queue or fail"))
                    }
                    strategy = value
                }
                details = ContinuedTaskDetails(title: title, subtitle: subtitle ?? "", strategy: strategy)
            }
            var earliest: Instant?
            if let seconds = earliestBegin {
                // Beyond ±292 years the nanosecond count would overflow: such a date is a mistake anyway.
                do throws(NumberOutOfRange) {
                    earliest = try CheckedNumber.instant(secondsSinceEpoch: seconds, field: "earliestBegin")
                } catch {
                    return .failure(InvalidField(error))
                }
            }
            return .success(TaskRequest(
                identifier: identifier, kind: kind, earliestBegin: earliest, requiresNetwork: requiresNetwork,
                requiresExternalPower: requiresExternalPower ?? false, submittedAt: now, continued: details))
        }
    }

    /// A field of a message that is not acceptable.
    public struct InvalidField: Error, Hashable, Sendable {
        /// The field's name.
        public var name: String
        /// What it must be.
        public var description: String

        /// Creates the error.
        public init(name: String, description: String) {
            self.name = name
            self.description = description
        }

        /// A number out of its field's range, with the value and the range.
        public init(_ error: NumberOutOfRange) {
            self.init(name: error.field, description: "is \(error.value), out of range; must be \(error.expected)")
        }
    }

    /// `RegisterTask` and `CancelTask` parameters.
    public struct IdentifierParameters: Codable, Hashable, Sendable {
        public var identifier: String
        public init(identifier: String) { self.identifier = identifier }
    }

    /// `SubmitTask` parameters.
    public struct SubmitParameters: Codable, Hashable, Sendable {
        public var request: TaskRequestMessage
        public init(request: TaskRequestMessage) { self.request = request }
    }

    /// `CancelTask` reply.
    public struct CancelReply: Codable, Hashable, Sendable {
        public var cancelled: Bool
        public init(cancelled: Bool) { self.cancelled = cancelled }
    }

    /// `PendingTasks` reply.
    public struct PendingReply: Codable, Hashable, Sendable {
        public var requests: [TaskRequestMessage]
        public init(requests: [TaskRequestMessage]) { self.requests = requests }
    }

    /// `SetFetchInterval` parameters.
    public struct FetchIntervalParameters: Codable, Hashable, Sendable {
        /// `never`, `minimum` or `seconds`.
        public var interval: String
        public var seconds: Double?
        public init(interval: String, seconds: Double? = nil) {
            self.interval = interval
            self.seconds = seconds
        }

        /// The wire form of an interval.
        public init(_ interval: FetchInterval) {
            switch interval {
            case .never: self.init(interval: "never")
            case .minimum: self.init(interval: "minimum")
            case .seconds(let seconds): self.init(interval: "seconds", seconds: seconds)
            }
        }

        /// The core interval, or what is wrong with it.
        public var fetchInterval: Result<FetchInterval, InvalidField> {
            // Checked whenever it is given, also where it is not read: a number out of range is a mistake either way.
            if let seconds {
                do throws(NumberOutOfRange) {
                    try CheckedNumber.finite(seconds, field: "seconds", in: 0 ... CheckedNumber.longestDuration, unit: "seconds")
                } catch {
                    return .failure(InvalidField(error))
                }
            }
            switch interval {
            case "never": return .success(.never)
            case "minimum": return .success(.minimum)
            case "seconds":
                guard let seconds else {
                    return .failure(InvalidField(name: "seconds", description: "is required with interval \"seconds\""))
                }
                return .success(.seconds(seconds))
            default:
                return .failure(InvalidField(name: "interval", description: "must be never, minimum or seconds"))
            }
        }
    }

    /// `CompleteTask` parameters.
    public struct CompleteParameters: Codable, Hashable, Sendable {
        public var run: UInt64
        /// `newData`, `noData` or `failed`.
        public var result: String
        public init(run: UInt64, result: String) {
            self.run = run
            self.result = result
        }
    }

    /// `ReportTaskProgress` parameters.
    public struct ProgressParameters: Codable, Hashable, Sendable {
        public var run: UInt64
        public var completed: Int64
        public var total: Int64
        public var title: String?
        public var subtitle: String?
        public init(run: UInt64, completed: Int64, total: Int64, title: String? = nil, subtitle: String? = nil) {
            self.run = run
            self.completed = completed
            self.total = total
            self.title = title
            self.subtitle = subtitle
        }
    }
}
