// The messages of every lifecycle step and every background-task call, written and read by hand (see
// `WireEncodable`). Each writes the members its synthesized `Codable` conformance writes, in the same order, and
// reads what that conformance reads; `WireJSONTests` checks both against Foundation's coders.

extension VarlinkEmpty: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        writer.beginObject()
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) { self.init() }
}

extension NoParameters: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool { VarlinkEmpty().writeWire(&writer) }

    init(wire object: WireObject) throws(WireObject.Unusable) { self.init() }
}

extension EmptyReply: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool { VarlinkEmpty().writeWire(&writer) }

    init(wire object: WireObject) throws(WireObject.Unusable) { self.init() }
}

extension AppInterface.BeginParameters: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        writer.beginObject()
        writer.key("name")
        writer.value(name)
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) {
        self.init(name: try object.string(required: "name"))
    }
}

extension AppInterface.BeginReply: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        writer.beginObject()
        writer.key("id")
        writer.value(id)
        writer.key("timeRemaining")
        guard writer.value(timeRemaining) else { return false }
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) {
        self.init(id: try object.unsigned(required: "id"), timeRemaining: try object.double(required: "timeRemaining"))
    }
}

extension AppInterface.EndParameters: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        writer.beginObject()
        writer.key("id")
        writer.value(id)
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) {
        self.init(id: try object.unsigned(required: "id"))
    }
}

extension AppInterface.EndReply: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        writer.beginObject()
        writer.key("ended")
        writer.value(ended)
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) {
        self.init(ended: try object.bool(required: "ended"))
    }
}

extension AppInterface.CallbackDoneParameters: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        writer.beginObject()
        writer.key("id")
        writer.value(id)
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) {
        self.init(id: try object.unsigned(required: "id"))
    }
}

extension AppInterface.TimeRemainingReply: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        writer.beginObject()
        writer.key("seconds")
        guard writer.value(seconds) else { return false }
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) {
        self.init(seconds: try object.double(required: "seconds"))
    }
}

extension AppInterface.CallbackMessage: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        writer.beginObject()
        writer.key("id")
        writer.value(id)
        writer.key("kind")
        writer.value(kind)
        writer.member("launchReason", launchReason)
        writer.member("taskIds", taskIds)
        guard writer.member("deadline", deadline) else { return false }
        writer.member("run", run)
        writer.member("taskIdentifier", taskIdentifier)
        writer.member("taskKind", taskKind)
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) {
        // Task id lists are rare (expiration handlers): Foundation reads them.
        guard !object.has("taskIds") else { throw WireObject.Unusable() }
        self.init(
            id: try object.unsigned(required: "id"), kind: try object.string(required: "kind"),
            launchReason: try object.string("launchReason"), deadline: try object.double("deadline"),
            run: try object.unsigned("run"), taskIdentifier: try object.string("taskIdentifier"),
            taskKind: try object.string("taskKind"))
    }
}

extension AppInterface.AttachReply: WireEncodable, WireDecodable {
    func writeWire(_ writer: inout WireWriter) -> Bool {
        // The app's description comes once per attach: Foundation writes it.
        guard app == nil else { return false }
        writer.beginObject()
        if let callback {
            writer.key("callback")
            guard callback.writeWire(&writer) else { return false }
        }
        writer.endObject()
        return true
    }

    init(wire object: WireObject) throws(WireObject.Unusable) {
        guard !object.has("app") else { throw WireObject.Unusable() }
        self.init(callback: try object.object("callback").map { object throws(WireObject.Unusable) in
            try AppInterface.CallbackMessage(wire: object)
        })
    }
}
