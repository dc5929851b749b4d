import Foundation
import NIOCore
import OffstageProtocol

/// Handles one method of a Varlink interface.
///
/// It is called on the server's event loop with the caller's identity, the call, and the responder through which it
/// answers, now or later (from the same event loop). Throwing a `VarlinkError` answers the call with that error, so
/// `try request.decodeParameters(...)` is enough to reject bad parameters; any other error is answered
/// `io.offstage.Protocol.InternalError` with the error's description. An error thrown after the call was answered
/// is dropped.
///
/// The closure is untyped `throws` on purpose: Swift 6.3 does not infer typed throws for multi-statement closure
/// literals, and crashes compiling some that spell `throws(VarlinkError)` out.
public typealias VarlinkMethodHandler =
    @Sendable (VarlinkCallContext, VarlinkRequest, VarlinkResponder) throws -> Void

/// A Varlink interface a service implements: its description and a handler for each method it implements.
///
/// A method the description declares but `methods` lacks is answered `org.varlink.service.MethodNotImplemented`.
public protocol VarlinkInterface: Sendable {
    /// The interface's IDL, which also names it.
    var interfaceDescription: VarlinkInterfaceDescription { get }
    /// Handlers by unqualified method name (`Ping`, not `io.offstage.App.Ping`).
    var methods: [String: VarlinkMethodHandler] { get }
}

/// An identifier for one client connection, unique for the life of a `VarlinkServer`.
public struct VarlinkConnectionID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number: connections are numbered from 1 in the order they were accepted.
    public let rawValue: UInt64

    /// The identifier with number `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Orders by acceptance.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `#12`.
    public var description: String { "#\(rawValue)" }
}

/// What a handler knows about the connection a call came on.
public struct VarlinkCallContext: Sendable {
    /// The caller's process, user and group, from the kernel. Identity comes from here, never from message fields.
    public let peer: PeerCredentials
    /// The connection, for telling callers apart and matching `VarlinkServer.onConnectionClosed`.
    public let connectionID: VarlinkConnectionID
    /// The event loop handlers run on: the server's single loop.
    public let eventLoop: any EventLoop

    private let channel: any Channel

    init(peer: PeerCredentials, connectionID: VarlinkConnectionID, channel: any Channel) {
        self.peer = peer
        self.connectionID = connectionID
        self.eventLoop = channel.eventLoop
        self.channel = channel
    }

    /// Closes the connection, from any thread: calls still in progress on it can no longer be answered, and their
    /// responders report `isClosed`.
    public func closeConnection() {
        channel.close(promise: nil)
    }
}

/// A call as a handler receives it: the envelope, and the message it came in, from which the parameters are decoded
/// into the type the method expects.
public struct VarlinkRequest: Sendable {
    /// The call as decoded from its message.
    public let call: VarlinkReceivedCall

    /// A request for `call`.
    public init(_ call: VarlinkReceivedCall) {
        self.call = call
    }

    /// The envelope: method and flags.
    public var header: VarlinkCallHeader { call.header }

    /// The whole message, JSON text without its NUL terminator.
    public var message: Data { call.message }

    /// The fully qualified method called.
    public var method: String { header.method }

    /// Whether the caller accepts a stream of replies (`"more": true`).
    public var more: Bool { header.more }

    /// Whether the caller wants no reply (`"oneway": true`). Replies to such a call are dropped.
    public var oneway: Bool { header.oneway }

    /// The call's parameters as a `P`; a call without parameters has `{}`.
    ///
    /// - Throws: `org.varlink.service.InvalidParameter` naming the parameter that is missing or of the wrong type.
    public func decodeParameters<P: Decodable>(_ type: P.Type = P.self) throws(VarlinkError) -> P {
        try call.decodeParameters(as: P.self)
    }

    /// The call's parameters as untyped JSON.
    public func parameters() throws(VarlinkError) -> [String: JSONValue] {
        try decodeParameters([String: JSONValue].self)
    }

    /// Throws `org.varlink.service.ExpectedMore` unless the caller set `"more": true`, for methods that only stream.
    public func requireMore() throws(VarlinkError) {
        if !header.more { throw .expectedMore(method: header.method) }
    }
}
