import Foundation

/// A Varlink error: what a service replies instead of a result, and what a handler throws to make it reply one.
///
/// On the wire it is `{"error": "<name>", "parameters": {...}}`. The name is fully qualified by the interface that
/// declares it (`io.offstage.Control.AppNotInstalled`); the parameters are the fields that interface declares for it.
/// Offstage adds a `description` string to the errors it raises itself, so that a person reading raw replies learns
/// what was wrong; Varlink clients ignore fields they do not know.
public struct VarlinkError: Error, Sendable, Hashable {
    /// The fully qualified error name, `<interface>.<ErrorName>`.
    public var name: String
    /// The error's fields, a JSON object.
    public var parameters: [String: JSONValue]

    /// An error with untyped parameters.
    public init(_ name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// An error whose parameters are a typed value, encoded to a JSON object.
    ///
    /// - Throws: `EncodingError` when `parameters` does not encode to a JSON object.
    public init(_ name: String, encoding parameters: some Encodable) throws {
        let data = try VarlinkCodec.encoder.encode(parameters)
        let value = try VarlinkCodec.decoder.decode(JSONValue.self, from: data)
        guard case .object(let members) = value else {
            throw EncodingError.invalidValue(
                parameters,
                .init(codingPath: [], debugDescription: "Parameters of error \(name) must encode to a JSON object")
            )
        }
        self.init(name, parameters: members)
    }

    /// The parameters decoded as a typed value, for clients that know the error's fields.
    public func decodeParameters<P: Decodable>(as type: P.Type = P.self) throws -> P {
        let data = try VarlinkCodec.encoder.encode(parameters)
        return try VarlinkCodec.decoder.decode(P.self, from: data)
    }

    /// The parameter `name` when it is a string, e.g. the `description` Offstage adds to its errors.
    public func stringParameter(_ name: String) -> String? {
        parameters[name]?.stringValue
    }

    /// The interface part of the name: everything before the last dot.
    public var interface: String {
        guard let dot = name.lastIndex(of: ".") else { return "" }
        return String(name[..<dot])
    }
}

// MARK: - The standard errors of org.varlink.service and Offstage's protocol errors

extension VarlinkError {
    /// Names of the errors every Varlink service may reply.
    public enum Name {
        /// `org.varlink.service.InterfaceNotFound (interface: string)`.
        public static let interfaceNotFound = "org.varlink.service.InterfaceNotFound"
        /// `org.varlink.service.MethodNotFound (method: string)`.
        public static let methodNotFound = "org.varlink.service.MethodNotFound"
        /// `org.varlink.service.MethodNotImplemented (method: string)`.
        public static let methodNotImplemented = "org.varlink.service.MethodNotImplemented"
        /// `org.varlink.service.InvalidParameter (parameter: string)`.
        public static let invalidParameter = "org.varlink.service.InvalidParameter"
        /// `org.varlink.service.PermissionDenied ()`.
        public static let permissionDenied = "org.varlink.service.PermissionDenied"
        /// `org.varlink.service.ExpectedMore ()`.
        public static let expectedMore = "org.varlink.service.ExpectedMore"
        /// `io.offstage.Protocol.MessageTooLarge (limit: int)`.
        public static let messageTooLarge = "io.offstage.Protocol.MessageTooLarge"
        /// `io.offstage.Protocol.MalformedMessage (reason: string)`.
        public static let malformedMessage = "io.offstage.Protocol.MalformedMessage"
        /// `io.offstage.Protocol.UpgradeNotSupported (method: string)`.
        public static let upgradeNotSupported = "io.offstage.Protocol.UpgradeNotSupported"
        /// `io.offstage.Protocol.InternalError (reason: string)`.
        public static let internalError = "io.offstage.Protocol.InternalError"
    }

    /// The service does not implement the interface `interface`.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(
            Name.interfaceNotFound,
            parameters: [
                "interface": .string(interface),
                "description": .string(
                    "This service has no interface '\(interface)'; "
                        + "org.varlink.service.GetInfo lists the interfaces it has"
                ),
            ]
        )
    }

    /// The interface does not declare the method `method` (fully qualified).
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(
            Name.methodNotFound,
            parameters: [
                "method": .string(method),
                "description": .string(
                    "No method '\(method)'; org.varlink.service.GetInterfaceDescription shows the methods "
                        + "an interface declares"
                ),
            ]
        )
    }

    /// The interface declares `method` (fully qualified) but this service does not implement it.
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(
            Name.methodNotImplemented,
            parameters: [
                "method": .string(method),
                "description": .string("The method '\(method)' is declared but this service does not implement it"),
            ]
        )
    }

    /// The call's parameter `parameter` is missing or has the wrong type or value; `description` says which.
    public static func invalidParameter(_ parameter: String, description: String? = nil) -> VarlinkError {
        var parameters: [String: JSONValue] = ["parameter": .string(parameter)]
        if let description { parameters["description"] = .string(description) }
        return VarlinkError(Name.invalidParameter, parameters: parameters)
    }

    /// The caller may not make this call; `description` says why and what would allow it.
    public static func permissionDenied(description: String? = nil) -> VarlinkError {
        VarlinkError(Name.permissionDenied, parameters: description.map { ["description": .string($0)] } ?? [:])
    }

    /// The method only streams replies, and the call did not set `"more": true`.
    public static func expectedMore(method: String? = nil) -> VarlinkError {
        var text = "This method sends a stream of replies: call it with \"more\": true"
        if let method { text = "\(method) sends a stream of replies: call it with \"more\": true" }
        return VarlinkError(Name.expectedMore, parameters: ["description": .string(text)])
    }

    /// A message was longer than the receiver accepts (`limit` bytes, without its NUL terminator).
    public static func messageTooLarge(limit: Int) -> VarlinkError {
        VarlinkError(
            Name.messageTooLarge,
            parameters: [
                "limit": .int(limit),
                "description": .string(
                    "A message was longer than \(limit) bytes or was not terminated by a NUL byte; "
                        + "the connection is closed"
                ),
            ]
        )
    }

    /// A message was not a Varlink call: not JSON, not an object, or without a string `method`.
    public static func malformedMessage(reason: String) -> VarlinkError {
        VarlinkError(Name.malformedMessage, parameters: ["reason": .string(reason)])
    }

    /// The call asked for a connection upgrade, which Offstage's services do not offer.
    public static func upgradeNotSupported(method: String) -> VarlinkError {
        VarlinkError(
            Name.upgradeNotSupported,
            parameters: [
                "method": .string(method),
                "description": .string("\(method) does not upgrade connections; call it without \"upgrade\""),
            ]
        )
    }

    /// The service failed to produce an answer to a valid call (a reply that would not encode, say); `reason` says
    /// what failed. It is a bug in the service, worth reporting with the reason.
    public static func internalError(reason: String) -> VarlinkError {
        VarlinkError(Name.internalError, parameters: ["reason": .string(reason)])
    }
}

extension VarlinkError: CustomStringConvertible {
    /// The name and the parameters, e.g. `org.varlink.service.InvalidParameter {"parameter":"appID"}`.
    public var description: String {
        parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters))"
    }
}

extension VarlinkError: LocalizedError {
    /// Same as `description`, so that `localizedDescription` is not Foundation's generic text.
    public var errorDescription: String? { description }
}
