import Foundation
// The messages of every lifecycle step and every background-task call, written and read by hand (see
// `VarlinkDirectEncodable` and `VarlinkDirectDecodable`). Each writes the members its synthesized `Codable`
// conformance writes (no key where that leaves an optional out) and reads what that conformance reads;
// `DirectAppMessagesTests` checks both directions against Foundation's coders.

/// A message with no members: `{}` both ways.
protocol DirectEmptyMessage: VarlinkDirectEncodable, VarlinkDirectDecodable {
    init()
}

extension DirectEmptyMessage {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws { json.raw("{}") }
    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable) { self.init() }
}

extension VarlinkEmpty: DirectEmptyMessage {}
extension NoParameters: DirectEmptyMessage {}
extension EmptyReply: DirectEmptyMessage {}

/// A message whose only member is `id`, a number: `{"id":N}` both ways.
protocol DirectIDMessage: VarlinkDirectEncodable, VarlinkDirectDecodable {
    var id: UInt64 { get }
    init(id: UInt64)
}

extension DirectIDMessage {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"id\":")
        json.number(id)
        json.raw("}")
    }

    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable) {
        self.init(id: try object.unsigned(required: "id"))
    }
}

extension AppInterface.EndParameters: DirectIDMessage {}
extension AppInterface.CallbackDoneParameters: DirectIDMessage {}

extension AppInterface.BeginParameters: VarlinkDirectEncodable, VarlinkDirectDecodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"name\":")
        json.string(name)
        json.raw("}")
    }

    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable) {
        self.init(name: try object.string(required: "name"))
    }
}

// BeginReply and EndReply write themselves in DirectJSON+Interfaces.swift.
extension AppInterface.BeginReply: VarlinkDirectDecodable {
    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable) {
        self.init(id: try object.unsigned(required: "id"), timeRemaining: try object.double(required: "timeRemaining"))
    }
}

extension AppInterface.EndReply: VarlinkDirectDecodable {
    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable) {
        self.init(ended: try object.bool(required: "ended"))
    }
}

extension AppInterface.TimeRemainingReply: VarlinkDirectEncodable, VarlinkDirectDecodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"seconds\":")
        try json.number(seconds)
        json.raw("}")
    }

    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable) {
        self.init(seconds: try object.double(required: "seconds"))
    }
}

extension AppInterface.CallbackMessage: VarlinkDirectEncodable, VarlinkDirectDecodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"id\":")
        json.number(id)
        json.raw(",\"kind\":")
        json.string(kind)
        if let launchReason {
            json.raw(",\"launchReason\":")
            json.string(launchReason)
        }
        if let taskIds {
            json.raw(",\"taskIds\":[")
            for (index, task) in taskIds.enumerated() {
                if index > 0 { json.raw(",") }
                json.number(task)
            }
            json.raw("]")
        }
        if let deadline {
            json.raw(",\"deadline\":")
            try json.number(deadline)
        }
        if let run {
            json.raw(",\"run\":")
            json.number(run)
        }
        if let taskIdentifier {
            json.raw(",\"taskIdentifier\":")
            json.string(taskIdentifier)
        }
        if let taskKind {
            json.raw(",\"taskKind\":")
            json.string(taskKind)
        }
        if let taskTitle {
            json.raw(",\"taskTitle\":")
            json.string(taskTitle)
        }
        if let taskSubtitle {
            json.raw(",\"taskSubtitle\":")
            json.string(taskSubtitle)
        }
        if let audioInterruption {
            json.raw(",\"audioInterruption\":{\"began\":")
            json.bool(audioInterruption.began)
            json.raw(",\"shouldResume\":")
            json.bool(audioInterruption.shouldResume)
            json.raw(",\"reason\":")
            json.string(audioInterruption.reason)
            json.raw("}")
        }
        if let socketClosed {
            json.raw(",\"socketClosed\":")
            json.bool(socketClosed)
        }
        if let systemEvent {
            json.raw(",\"systemEvent\":")
            json.string(systemEvent)
        }
        if let locations {
            json.raw(",\"locations\":[")
            for (index, location) in locations.enumerated() {
                if index > 0 { json.raw(",") }
                try location.appendJSON(to: &json)
            }
            json.raw("]")
        }
        if let locationError {
            json.raw(",\"locationError\":")
            json.string(locationError)
        }
        if let accessory {
            json.raw(",\"accessory\":")
            json.string(accessory)
        }
        if let accessoryEvent {
            json.raw(",\"accessoryEvent\":")
            json.string(accessoryEvent)
        }
        if let notification {
            // A notification is rare next to lifecycle callbacks, and nested: Foundation writes it.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            json.raw(",\"notification\":")
            json.json(try encoder.encode(notification))
        }
        if let actionIdentifier {
            json.raw(",\"actionIdentifier\":")
            json.string(actionIdentifier)
        }
        if let pushId {
            json.raw(",\"pushId\":")
            json.string(pushId)
        }
        if let payload {
            // The push's payload, as text: it goes to the app as the server wrote it (SPEC NT-4).
            json.raw(",\"payload\":")
            json.string(payload)
        }
        if let session {
            json.raw(",\"session\":")
            json.string(session)
        }
        json.raw("}")
    }

    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable) {
        // Task id lists (expiration handlers), interruptions and locations (nested objects, at most about once a
        // second) are rare next to lifecycle callbacks: Foundation reads them.
        guard !object.has("taskIds"), !object.has("audioInterruption"), !object.has("locations"),
            !object.has("locationError"), !object.has("notification"), !object.has("taskTitle"), !object.has("taskSubtitle")
        else { throw VarlinkDirectObject.Unusable() }
        self.init(
            id: try object.unsigned(required: "id"), kind: try object.string(required: "kind"),
            launchReason: try object.string("launchReason"), deadline: try object.double("deadline"),
            run: try object.unsigned("run"), taskIdentifier: try object.string("taskIdentifier"),
            taskKind: try object.string("taskKind"), socketClosed: try object.bool("socketClosed"),
            systemEvent: try object.string("systemEvent"), accessory: try object.string("accessory"),
            accessoryEvent: try object.string("accessoryEvent"), pushId: try object.string("pushId"),
            payload: try object.string("payload"), session: try object.string("session"))
    }
}

extension AppInterface.AppInfo: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"id\":")
        json.string(id)
        json.raw(",\"pid\":")
        json.number(pid)
        json.raw(",\"multitaskingSupported\":")
        json.bool(multitaskingSupported)
        json.raw(",\"dataDirectory\":")
        json.string(dataDirectory)
        json.raw("}")
    }
}

extension AppInterface.AttachReply: VarlinkDirectEncodable, VarlinkDirectDecodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{")
        if let app {
            json.raw("\"app\":")
            try app.appendJSON(to: &json)
        }
        if let callback {
            json.raw(app == nil ? "\"callback\":" : ",\"callback\":")
            try callback.appendJSON(to: &json)
        }
        json.raw("}")
    }

    init(direct object: VarlinkDirectObject) throws(VarlinkDirectObject.Unusable) {
        // The app's description comes once per attach: Foundation reads it.
        guard !object.has("app") else { throw VarlinkDirectObject.Unusable() }
        self.init(callback: try object.object("callback").map { object throws(VarlinkDirectObject.Unusable) in
            try AppInterface.CallbackMessage(direct: object)
        })
    }
}
