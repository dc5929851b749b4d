// The replies that write their own JSON (see ``VarlinkDirectEncodable``): those whose size grows with the number of
// apps, requests or log lines, and those of the SDK's begin/end calls. Each writes the keys its `encode(to:)` writes,
// in the same order, with `null` where that writes null and no key where it leaves one out.

extension ControlInterface.AppsReply: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"apps\":")
        try json.array(apps)
        json.raw("}")
    }
}

extension ControlInterface.App: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"id\":")
        json.string(id)
        json.raw(",\"state\":")
        json.string(state)
        json.raw(",\"pid\":")
        json.number(orNull: pid)
        json.raw(",\"backgroundTasks\":")
        json.number(backgroundTasks)
        json.raw(",\"backgroundTimeRemaining\":")
        try json.number(orNull: backgroundTimeRemaining)
        json.raw(",\"launchReason\":")
        json.string(orNull: launchReason)
        json.raw(",\"terminating\":")
        json.string(orNull: terminating)
        json.raw(",\"forceQuit\":")
        json.bool(forceQuit)
        json.raw(",\"lastTermination\":")
        json.string(orNull: lastTermination)
        json.raw(",\"lastTerminationAt\":")
        try json.number(orNull: lastTerminationAt)
        json.raw(",\"backgroundModes\":")
        json.strings(backgroundModes)
        json.raw(",\"exitsOnSuspend\":")
        json.bool(exitsOnSuspend)
        json.raw(",\"activeModes\":")
        json.strings(activeModes)
        json.raw(",\"modeHolds\":")
        json.strings(modeHolds)
        json.raw(",\"suspendedBecause\":")
        if let suspendedBecause { json.string(suspendedBecause) } else { json.raw("null") }
        json.raw(",\"continuedTasks\":")
        try json.array(continuedTasks)
        json.raw(",\"memoryBytes\":")
        json.number(orNull: memoryBytes)
        json.raw(",\"memoryBand\":")
        if let memoryBand { json.string(memoryBand) } else { json.raw("null") }
        json.raw(",\"memoryEndingRank\":")
        json.number(orNull: memoryEndingRank)
        json.raw(",\"keptInMemory\":")
        json.bool(keptInMemory)
        json.raw("}")
    }
}

extension ControlInterface.ContinuedTaskMessage: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"identifier\":")
        json.string(identifier)
        json.raw(",\"state\":")
        json.string(state)
        json.raw(",\"title\":")
        json.string(title)
        json.raw(",\"subtitle\":")
        json.string(subtitle)
        json.raw(",\"completed\":")
        json.number(completed)
        json.raw(",\"total\":")
        json.number(total)
        json.raw(",\"endedBecause\":")
        json.string(orNull: endedBecause)
        json.raw("}")
    }
}

extension ControlInterface.TasksReply: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"tasks\":")
        try json.array(tasks)
        json.raw("}")
    }
}

extension ControlInterface.TaskMessage: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"app\":")
        json.string(app)
        json.raw(",\"identifier\":")
        json.string(identifier)
        json.raw(",\"kind\":")
        json.string(kind)
        json.raw(",\"state\":")
        json.string(state)
        json.raw(",\"earliestBegin\":")
        try json.number(orNull: earliestBegin)
        json.raw(",\"requiresNetwork\":")
        json.bool(requiresNetwork)
        json.raw(",\"requiresExternalPower\":")
        json.bool(requiresExternalPower)
        json.raw(",\"submittedAt\":")
        try json.number(submittedAt)
        json.raw(",\"plannedAt\":")
        try json.number(orNull: plannedAt)
        json.raw(",\"plannedReason\":")
        json.string(orNull: plannedReason)
        json.raw(",\"holds\":")
        try json.array(holds)
        json.raw(",\"startedAt\":")
        try json.number(orNull: startedAt)
        json.raw(",\"expiresAt\":")
        try json.number(orNull: expiresAt)
        json.raw(",\"forced\":")
        json.bool(orNull: forced)
        json.raw(",\"summary\":")
        json.string(summary)
        json.raw(",\"title\":")
        json.string(orNull: title)
        json.raw(",\"subtitle\":")
        json.string(orNull: subtitle)
        json.raw(",\"completed\":")
        json.number(orNull: completed)
        json.raw(",\"total\":")
        json.number(orNull: total)
        json.raw(",\"endedBecause\":")
        json.string(orNull: endedBecause)
        json.raw("}")
    }
}

extension ControlInterface.HoldMessage: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"controller\":")
        json.string(controller)
        json.raw(",\"reason\":")
        json.string(reason)
        json.raw(",\"until\":")
        try json.number(orNull: until)
        json.raw("}")
    }
}

extension ControlInterface.LogReply: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"entries\":")
        try json.array(entries)
        json.raw("}")
    }
}

extension ControlInterface.LogLine: VarlinkDirectEncodable {
    // Synthesized `Encodable`: an absent app or state is left out, not written as null.
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"id\":")
        json.number(id)
        json.raw(",\"at\":")
        try json.number(at)
        if let app {
            json.raw(",\"app\":")
            json.string(app)
        }
        json.raw(",\"kind\":")
        json.string(kind)
        json.raw(",\"message\":")
        json.string(message)
        if let state {
            json.raw(",\"state\":")
            json.string(state)
        }
        json.raw("}")
    }
}

extension AppInterface.BeginReply: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw("{\"id\":")
        json.number(id)
        json.raw(",\"timeRemaining\":")
        try json.number(timeRemaining)
        json.raw("}")
    }
}

extension AppInterface.EndReply: VarlinkDirectEncodable {
    public func appendJSON(to json: inout VarlinkDirectJSON) throws {
        json.raw(ended ? "{\"ended\":true}" : "{\"ended\":false}")
    }
}
