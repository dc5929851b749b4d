import OffstageCore

extension AppInterface {
    /// A callback on the wire.
    public struct CallbackMessage: Codable, Hashable, Sendable {
        public var id: UInt64
        public var kind: String
        public var launchReason: String?
        public var taskIds: [UInt64]?
        public var deadline: Double?
        public var run: UInt64?
        public var taskIdentifier: String?
        public var taskKind: String?
        public var taskTitle: String?
        public var taskSubtitle: String?
        public var audioInterruption: AudioInterruption?
        public var socketClosed: Bool?
        public var locations: [LocationMessage]?
        public var locationError: String?
        public var systemEvent: String?
        public var accessory: String?
        public var accessoryEvent: String?
        public var notification: NotificationsInterface.DeliveredMessage?
        public var actionIdentifier: String?
        public var pushId: String?
        public var payload: String?
        public var session: String?

        public init(
            id: UInt64, kind: String, launchReason: String? = nil, taskIds: [UInt64]? = nil, deadline: Double? = nil,
            run: UInt64? = nil, taskIdentifier: String? = nil, taskKind: String? = nil,
            audioInterruption: AudioInterruption? = nil, socketClosed: Bool? = nil, locations: [LocationMessage]? = nil,
            locationError: String? = nil, systemEvent: String? = nil, accessory: String? = nil,
            accessoryEvent: String? = nil, notification: NotificationsInterface.DeliveredMessage? = nil,
            actionIdentifier: String? = nil, pushId: String? = nil, payload: String? = nil, session: String? = nil,
            taskTitle: String? = nil, taskSubtitle: String? = nil
        ) {
            self.id = id
            self.kind = kind
            self.launchReason = launchReason
            self.taskIds = taskIds
            self.deadline = deadline
            self.run = run
            self.taskIdentifier = taskIdentifier
            self.taskKind = taskKind
            self.taskTitle = taskTitle
            self.taskSubtitle = taskSubtitle
            self.audioInterruption = audioInterruption
            self.socketClosed = socketClosed
            self.locations = locations
            self.locationError = locationError
            self.systemEvent = systemEvent
            self.accessory = accessory
            self.accessoryEvent = accessoryEvent
            self.notification = notification
            self.actionIdentifier = actionIdentifier
            self.pushId = pushId
            self.payload = payload
            self.session = session
        }

        /// The wire form of a core callback.
        public init(_ callback: Callback) {
            var reason: String?
            var tasks: [UInt64]?
            var run: UInt64?
            var identifier: String?
            var taskKind: String?
            var details: ContinuedTaskDetails?
            var interruption: AudioInterruption?
            var socketClosed: Bool?
            var locations: [LocationMessage]?
            var locationError: String?
            var systemEvent: String?
            var accessory: (name: String, event: String)?
            var notification: NotificationsInterface.DeliveredMessage?
            var actionIdentifier: String?
            var push: RemoteNotificationCall?
            var session: String?
            switch callback.kind {
            case .didFinishLaunching(let launchReason): reason = launchReason.rawValue
            case .backgroundTasksExpiring(let ids): tasks = ids.map(\.rawValue)
            case .runTask(let number, let name, let kind, let continued):
                (run, identifier, taskKind, details) = (number, name, kind.rawValue, continued)
            case .performFetch(let number), .taskExpiring(let number): run = number
            case .audioInterruption(let event): interruption = event
            case .voipSocket(let closed): socketClosed = closed
            case .locations(let fixes): locations = fixes.map(LocationMessage.init)
            case .locationError(let message): locationError = message
            case .systemEvent(let event): systemEvent = event.rawValue
            case .accessory(let name, let event): accessory = (name, event.rawValue)
            case .notificationWillPresent(let record): notification = .init(record)
            case .notificationResponse(let response):
                (notification, actionIdentifier) = (.init(response.notification), response.actionIdentifier)
            case .remoteNotification(let call): (run, push) = (call.run, call)
            case .transferEvents(let name, let number): (run, session) = (number, name)
            default: break
            }
            self.init(
                id: callback.id.rawValue, kind: callback.kind.name, launchReason: reason, taskIds: tasks,
                deadline: callback.deadline?.secondsSinceEpoch, run: run, taskIdentifier: identifier, taskKind: taskKind,
                audioInterruption: interruption, socketClosed: socketClosed, locations: locations,
                locationError: locationError, systemEvent: systemEvent, accessory: accessory?.name,
                accessoryEvent: accessory?.event, notification: notification, actionIdentifier: actionIdentifier,
                pushId: push?.push, payload: push?.payload, session: session, taskTitle: details?.title,
                taskSubtitle: details?.subtitle)
        }
    }
}
