import OffstageCore

extension NotificationsControlInterface {
    /// The `Notifications` reply as the daemon sends it: the schedule's own values, chosen and sorted once, written
    /// straight to JSON (``VarlinkDirectEncodable``).
    ///
    /// With every app's notifications listed (SPEC §11: 64,000 pending across 1,000 apps) the reply is about 25 MB.
    /// Made into ``NotificationsReply`` messages first and written by `JSONEncoder`, it took 1.8 s on the daemon's event
    /// loop: parsing each user info back from its text into values, then a container per level of every request. This
    /// writes each request from the core's values and puts its user info in as the JSON text it already is. Its
    /// `Encodable` form is ``reply``'s, and the text decodes to the same ``NotificationsReply`` (the protocol tests
    /// check it).
    public struct NotificationsListing: VarlinkDirectEncodable, Sendable {
        /// Pending requests, soonest first (then by app and identifier).
        public let pending: [(app: AppID, entry: PendingNotification)]
        /// Delivered notifications, oldest first, with those waiting for the app in front.
        public let delivered: [DeliveredNotification]
        /// The badges of the apps listed.
        public let badges: [(app: AppID, badge: Int)]
        /// The device's time zone.
        public let timeZone: String

        /// What the schedule holds for `app`, or for every app when nil.
        public init(_ schedule: NotificationSchedule, app: AppID?) {
            let apps = app.map { [$0] } ?? schedule.appsWithNotifications
            var pending: [(app: AppID, entry: PendingNotification)] = []
            pending.reserveCapacity(app == nil ? schedule.pendingCount : 128)
            for id in apps {
                for entry in schedule.pending(of: id) { pending.append((id, entry)) }
            }
            // The keys once, not built again by every comparison of the sort.
            let order = pending.indices.map { (due: pending[$0].entry.due, app: pending[$0].app, id: pending[$0].entry.identifier) }
            let sorted = pending.indices.sorted { (order[$0].due, order[$0].app, order[$0].id) < (order[$1].due, order[$1].app, order[$1].id) }
            var delivered = apps.flatMap { schedule.delivered[$0] ?? [] }
            delivered += schedule.awaitingApp.values.filter { app == nil || $0.app == app }
            delivered.sort { ($0.deliveredAt, $0.key) < ($1.deliveredAt, $1.key) }
            self.pending = sorted.map { pending[$0] }
            self.delivered = delivered
            self.badges = apps.compactMap { id in schedule.badges[id].map { (id, $0) } }
            self.timeZone = schedule.deviceTimeZone
        }

        /// The same reply as messages.
        public var reply: NotificationsReply {
            NotificationsReply(
                pending: pending.map { AppPendingMessage(app: $0.app, $0.entry) },
                delivered: delivered.map(AppDeliveredMessage.init),
                badges: badges.map { AppBadgeMessage(app: $0.app.rawValue, badge: $0.badge) }, timeZone: timeZone)
        }

        public func encode(to encoder: any Encoder) throws {
            try reply.encode(to: encoder)
        }

        public func appendJSON(to json: inout VarlinkDirectJSON) throws {
            json.raw("{\"pending\":[")
            for (index, item) in pending.enumerated() {
                if index > 0 { json.raw(",") }
                json.raw("{\"app\":")
                json.string(item.app.rawValue)
                json.raw(",\"request\":")
                let request = item.entry.request
                try Self.append(request, to: &json)
                json.raw(",\"trigger\":")
                json.string(request.trigger.summary)
                json.raw(",\"addedAt\":")
                try json.number(item.entry.addedAt.secondsSinceEpoch)
                json.raw(",\"due\":")
                try json.number(item.entry.due.secondsSinceEpoch)
                json.raw("}")
            }
            json.raw("],\"delivered\":[")
            for (index, record) in delivered.enumerated() {
                if index > 0 { json.raw(",") }
                json.raw("{\"app\":")
                json.string(record.app.rawValue)
                json.raw(",\"request\":")
                try Self.append(record.request, to: &json)
                json.raw(",\"due\":")
                try json.number(record.due.secondsSinceEpoch)
                json.raw(",\"deliveredAt\":")
                try json.number(record.deliveredAt.secondsSinceEpoch)
                json.raw(",\"late\":")
                json.bool(record.late)
                json.raw(",\"route\":")
                json.string(record.route.rawValue)
                json.raw("}")
            }
            json.raw("],\"badges\":[")
            for (index, item) in badges.enumerated() {
                if index > 0 { json.raw(",") }
                json.raw("{\"app\":")
                json.string(item.app.rawValue)
                json.raw(",\"badge\":")
                json.number(item.badge)
                json.raw("}")
            }
            json.raw("],\"timeZone\":")
            json.string(timeZone)
            json.raw("}")
        }

        /// A request as ``NotificationsInterface/RequestMessage`` encodes: empty texts and absent values left out. The
        /// user info is the core's JSON text (written by `JSONEncoder` when the request came in, so valid JSON), left
        /// out when empty as the message leaves it out.
        static func append(_ request: NotificationRequest, to json: inout VarlinkDirectJSON) throws {
            json.raw("{\"identifier\":")
            json.string(request.identifier)
            json.raw(",\"content\":{")
            let content = request.content
            var first = true
            func key(_ name: StaticString) {
                json.raw(first ? "\"" : ",\"")
                json.raw(name)
                json.raw("\":")
                first = false
            }
            if !content.title.isEmpty { key("title"); json.string(content.title) }
            if !content.subtitle.isEmpty { key("subtitle"); json.string(content.subtitle) }
            if !content.body.isEmpty { key("body"); json.string(content.body) }
            if let sound = content.sound { key("sound"); json.string(sound) }
            if let badge = content.badge { key("badge"); json.number(badge) }
            if NotificationsInterface.ContentMessage.hasUserInfo(content.userInfo) {
                key("userInfo")
                json.json(content.userInfo.utf8)
            }
            if !content.threadIdentifier.isEmpty { key("threadIdentifier"); json.string(content.threadIdentifier) }
            if !content.categoryIdentifier.isEmpty { key("categoryIdentifier"); json.string(content.categoryIdentifier) }
            json.raw("},\"trigger\":{\"kind\":")
            switch request.trigger {
            case .timeInterval(let seconds, let repeats):
                json.raw("\"timeInterval\",\"repeats\":")
                json.bool(repeats)
                json.raw(",\"seconds\":")
                try json.number(seconds)
            case .calendar(let match, let repeats):
                json.raw("\"calendar\",\"repeats\":")
                json.bool(repeats)
                json.raw(",\"dateComponents\":{")
                first = true
                let parts: [(StaticString, Int?)] = [
                    ("year", match.year), ("month", match.month), ("day", match.day), ("hour", match.hour),
                    ("minute", match.minute), ("second", match.second), ("weekday", match.weekday),
                ]
                for case (let name, let value?) in parts {
                    key(name)
                    json.number(value)
                }
                if let zone = match.timeZone { key("timeZone"); json.string(zone) }
                json.raw("}")
            case .date(let instant):
                json.raw("\"date\",\"date\":")
                try json.number(instant.secondsSinceEpoch)
            }
            json.raw("}}")
        }
    }
}
