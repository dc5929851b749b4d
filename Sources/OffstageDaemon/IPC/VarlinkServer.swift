import Foundation
import NIOCore
import NIOPosix
import OffstageProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The daemon's Varlink service on a Unix socket.
///
/// ```swift
/// let server = VarlinkServer(configuration: .init(socketPath: path, version: "1.0"), eventLoop: loop)
/// server.register(interface: appInterface, methods: ["Ping": { context, request, responder in ... }])
/// server.onConnectionClosed { context in ... }
/// try await server.start()
/// ...
/// try await server.close()
/// ```
///
/// Everything runs on the one event loop given: accepting, reading, and every handler call. Handlers can therefore
/// use daemon state confined to that loop without locks. `org.varlink.service` (`GetInfo`,
/// `GetInterfaceDescription`) and `io.offstage.Protocol` (the errors about messages) are built in.
///
/// ## The socket file
/// `start()` creates missing parent directories (mode 0700), replaces a stale socket file (one nothing listens on)
/// and refuses, with `VarlinkServerError.alreadyRunning`, to touch one another server still listens on. The socket
/// gets mode 0600 by default: the daemon and the apps it runs belong to one user, and the kernel then keeps every
/// other user out before a single byte is read. `close()` removes the file, unless another server has replaced it
/// since.
public final class VarlinkServer: Sendable {
    /// How a server presents itself and what it accepts.
    public struct Configuration: Sendable {
        /// The Unix socket path to listen on (see `OffstageSocketPath.resolve`).
        public var socketPath: String
        /// `GetInfo`'s vendor.
        public var vendor: String
        /// `GetInfo`'s product.
        public var product: String
        /// `GetInfo`'s version.
        public var version: String
        /// `GetInfo`'s url.
        public var url: String
        /// The longest message accepted, NUL excluded; a longer one is answered
        /// `io.offstage.Protocol.MessageTooLarge` and its connection closed.
        public var maximumMessageSize: Int
        /// The socket file's permission bits.
        public var socketMode: UInt32
        /// How many received calls may wait behind the one being answered before the server stops reading from that
        /// connection.
        public var maximumQueuedCalls: Int
        /// Where calls and errors are counted by method (`offstage_ipc_calls_total`, `offstage_ipc_errors_total`);
        /// nil counts nothing.
        public var metrics: DaemonMetrics?

        /// A configuration for a server on `socketPath`.
        public init(
            socketPath: String,
            vendor: String = "Offstage",
            product: String = "offstaged",
            version: String = "0",
            url: String = "",
            maximumMessageSize: Int = VarlinkFraming.defaultMaximumMessageSize,
            socketMode: UInt32 = 0o600,
            maximumQueuedCalls: Int = 64,
            metrics: DaemonMetrics? = nil
        ) {
            self.socketPath = socketPath
            self.vendor = vendor
            self.product = product
            self.version = version
            self.url = url
            self.maximumMessageSize = maximumMessageSize
            self.socketMode = socketMode
            self.maximumQueuedCalls = maximumQueuedCalls
            self.metrics = metrics
        }
    }

    /// What the server was made with.
    public let configuration: Configuration
    /// The loop every connection and handler runs on.
    public let eventLoop: any EventLoop

    private struct Setup: Sendable {
        var interfaces: [(description: VarlinkInterfaceDescription, methods: [String: VarlinkMethodHandler])] = []
        var onOpened: [@Sendable (VarlinkCallContext) -> Void] = []
        var onClosed: [@Sendable (VarlinkCallContext) -> Void] = []
        var replyGate: VarlinkReplyGate?
        var phase: Phase = .configuring
    }

    private enum Phase: Sendable {
        case configuring
        /// ``listen()`` made the socket: clients can connect and wait; nothing is read until ``start()``.
        case listening(descriptor: Int32, socketFile: VarlinkSocketFileIdentity?)
        case starting
        case running(any Channel, socketFile: VarlinkSocketFileIdentity?)
        case closed

        /// Interfaces and callbacks may still be added.
        var isConfigurable: Bool {
            switch self {
            case .configuring, .listening: true
            default: false
            }
        }
    }

    private let setup = Mutex(Setup())
    private let connections = Mutex<[VarlinkConnectionID: any Channel]>([:])
    private let nextConnectionID = Atomic<UInt64>(1)

    /// A server that will listen on `configuration.socketPath` and run on `eventLoop` (a loop of a
    /// `MultiThreadedEventLoopGroup`).
    public init(configuration: Configuration, eventLoop: any EventLoop) {
        self.configuration = configuration
        self.eventLoop = eventLoop
    }

    // MARK: Configuration, before start

    /// Serves the interface `interface` with `methods`, by unqualified method name. Must be called before `start()`.
    ///
    /// Every key of `methods` must be a method `interface` declares, and an interface may be registered once;
    /// breaking either rule is a programming error and stops the process with a message naming the mistake.
    public func register(interface: VarlinkInterfaceDescription, methods: [String: VarlinkMethodHandler]) {
        for name in methods.keys where !interface.declaresMethod(name) {
            preconditionFailure(
                "Method '\(name)' is not declared by interface \(interface.name); declare it in the IDL "
                    + "(declared: \(interface.methods.joined(separator: ", ")))"
            )
        }
        setup.withLock { setup in
            guard setup.phase.isConfigurable else {
                preconditionFailure("Register interface \(interface.name) before VarlinkServer.start()")
            }
            let builtIn = [VarlinkInterfaceDescription.service.name, VarlinkInterfaceDescription.offstageProtocol.name]
            precondition(
                !setup.interfaces.contains { $0.description.name == interface.name }
                    && !builtIn.contains(interface.name),
                "Interface \(interface.name) is registered twice"
            )
            setup.interfaces.append((interface, methods))
        }
    }

    /// Serves `interface`. Must be called before `start()`.
    public func register(_ interface: some VarlinkInterface) {
        register(interface: interface.interfaceDescription, methods: interface.methods)
    }

    /// Runs `callback` on the event loop when a client connects, before its first call.
    public func onConnectionOpened(_ callback: @escaping @Sendable (VarlinkCallContext) -> Void) {
        setup.withLock { $0.onOpened.append(callback) }
    }

    /// Runs `callback` on the event loop when a client connection closes, after the responder of any call left
    /// unanswered on it has run its `onClose` callbacks.
    public func onConnectionClosed(_ callback: @escaping @Sendable (VarlinkCallContext) -> Void) {
        setup.withLock { $0.onClosed.append(callback) }
    }

    /// Holds back final replies (and errors) while `gate` returns a pending future, sending each when it completes.
    /// The owner of state uses it to answer a call only once what the call changed is durable, without blocking the
    /// event loop while it is written. Replies of a stream (`replyMore`) are not held. Called on the event loop.
    public func holdFinalReplies(until gate: @escaping VarlinkReplyGate) {
        setup.withLock { $0.replyGate = gate }
    }

    // MARK: Running

    /// The socket path.
    public var socketPath: String { configuration.socketPath }

    /// Makes the socket and listens on it now, before the server serves: a client that connects from here on is
    /// accepted by the kernel and its calls wait in the socket until ``start()``, instead of being refused. The daemon
    /// calls this first thing, so apps reconnecting after a restart are served as soon as its state is loaded rather
    /// than at their next retry. Interfaces may still be registered until ``start()``.
    ///
    /// - Throws: as ``start()`` (the socket file is prepared the same way).
    public func listen() throws {
        try setup.withLock { setup in
            guard case .configuring = setup.phase else { throw VarlinkServerError.alreadyStarted }
            let path = configuration.socketPath
            try VarlinkSocketFile.prepare(path)
            let descriptor = try VarlinkSocketFile.makeListeningSocket(path, backlog: Self.backlog)
            guard chmod(path, mode_t(configuration.socketMode)) == 0 else {
                let code = errno
                VarlinkSocketFile.closeDescriptor(descriptor)
                unlink(path)
                throw VarlinkServerError.socketSetupFailed(path: path, operation: "chmod", errno: code)
            }
            setup.phase = .listening(descriptor: descriptor, socketFile: VarlinkSocketFileIdentity(path: path))
        }
    }

    /// Connections the kernel holds for the server before it accepts them: a restart brings every running app's two
    /// connections at once.
    static let backlog: Int32 = 256

    /// Binds the socket (unless ``listen()`` did) and starts accepting connections.
    ///
    /// - Throws: `VarlinkServerError` when the socket path is taken by a live server or by a file that is not a
    ///   socket, or a directory cannot be created; NIO's `IOError` when binding fails.
    public func start() async throws {
        let (router, onOpened, onClosed, replyGate, listening) = try setup.withLock { setup in
            var listening: (descriptor: Int32, socketFile: VarlinkSocketFileIdentity?)?
            switch setup.phase {
            case .configuring: break
            case .listening(let descriptor, let socketFile): listening = (descriptor, socketFile)
            default: throw VarlinkServerError.alreadyStarted
            }
            setup.phase = .starting
            let router = VarlinkRouter(
                registered: setup.interfaces,
                vendor: configuration.vendor,
                product: configuration.product,
                version: configuration.version,
                url: configuration.url,
                metrics: configuration.metrics
            )
            return (router, setup.onOpened, setup.onClosed, setup.replyGate, listening)
        }
        let path = configuration.socketPath
        let channel: any Channel
        let socketFile: VarlinkSocketFileIdentity?
        if let listening {
            do {
                channel = try await makeBootstrap(router: router, onOpened: onOpened, onClosed: onClosed, replyGate: replyGate)
                    .withBoundSocket(listening.descriptor)
                    .get()
            } catch {
                setup.withLock { $0.phase = .listening(descriptor: listening.descriptor, socketFile: listening.socketFile) }
                throw error
            }
            setup.withLock { $0.phase = .running(channel, socketFile: listening.socketFile) }
            return
        }
        do {
            try VarlinkSocketFile.prepare(path)
            channel = try await makeBootstrap(router: router, onOpened: onOpened, onClosed: onClosed, replyGate: replyGate)
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false)
                .get()
            guard chmod(path, mode_t(configuration.socketMode)) == 0 else {
                let code = errno
                try? await channel.close()
                throw VarlinkServerError.socketSetupFailed(path: path, operation: "chmod", errno: code)
            }
            socketFile = VarlinkSocketFileIdentity(path: path)
        } catch {
            setup.withLock { $0.phase = .configuring }
            throw error
        }
        setup.withLock { $0.phase = .running(channel, socketFile: socketFile) }
    }

    /// Stops accepting, closes every client connection (their `onClose` and `onConnectionClosed` callbacks run),
    /// and removes the socket file. Closing a server that is not running does nothing.
    public func close() async throws {
        let running: (channel: any Channel, socketFile: VarlinkSocketFileIdentity?)? = setup.withLock { setup in
            if case .listening(let descriptor, let socketFile) = setup.phase {
                // Listening and never started: nothing was accepted; the waiting clients see the socket close.
                setup.phase = .closed
                VarlinkSocketFile.closeDescriptor(descriptor)
                if let socketFile, VarlinkSocketFileIdentity(path: configuration.socketPath) == socketFile {
                    unlink(configuration.socketPath)
                }
                return nil
            }
            guard case .running(let channel, let socketFile) = setup.phase else { return nil }
            setup.phase = .closed
            return (channel, socketFile)
        }
        guard let running else { return }
        try? await running.channel.close()
        let open = connections.withLock { Array($0.values) }
        for channel in open {
            try? await channel.close()
        }
        if let socketFile = running.socketFile, VarlinkSocketFileIdentity(path: configuration.socketPath) == socketFile
        {
            unlink(configuration.socketPath)
        }
    }

    private func makeBootstrap(
        router: VarlinkRouter,
        onOpened: [@Sendable (VarlinkCallContext) -> Void],
        onClosed: [@Sendable (VarlinkCallContext) -> Void],
        replyGate: VarlinkReplyGate?
    ) -> ServerBootstrap {
        let maximumMessageSize = configuration.maximumMessageSize
        let maximumQueuedCalls = configuration.maximumQueuedCalls
        return ServerBootstrap(group: eventLoop)
            .serverChannelOption(.backlog, value: Self.backlog)
            // A client may send its calls and then shut down its sending side; its replies must still arrive.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [self] channel in
                guard let provider = channel as? any SocketOptionProvider else {
                    return channel.eventLoop.makeFailedFuture(VarlinkServerError.noPeerCredentials)
                }
                // On the loop already, so this completes at once, before the first byte is read.
                precondition(MemoryLayout<UcredLayout>.size == 12, "struct ucred is three 32-bit fields")
                let credentials: EventLoopFuture<UcredLayout> = provider.unsafeGetSocketOption(
                    level: SocketOptionLevel(SOL_SOCKET),
                    name: SocketOptionName(SO_PEERCRED)
                )
                return credentials.flatMapThrowing { credentials in
                    let id = VarlinkConnectionID(
                        rawValue: self.nextConnectionID.wrappingAdd(1, ordering: .relaxed).oldValue)
                    let context = VarlinkCallContext(
                        peer: PeerCredentials(credentials),
                        connectionID: id,
                        channel: channel
                    )
                    self.connections.withLock { $0[id] = channel }
                    let handler = VarlinkConnectionHandler(
                        router: router,
                        callContext: context,
                        maximumQueuedMessages: maximumQueuedCalls,
                        replyGate: replyGate
                    ) { context in
                        self.connections.withLock { _ = $0.removeValue(forKey: context.connectionID) }
                        for callback in onClosed { callback(context) }
                    }
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(VarlinkFrameDecoder(maximumMessageSize: maximumMessageSize)),
                        handler,
                    ])
                    for callback in onOpened { callback(context) }
                }
            }
    }
}

/// Why a `VarlinkServer` could not start.
public enum VarlinkServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Another server accepts connections on `path`.
    case alreadyRunning(path: String)
    /// `path` exists and is not a socket.
    case pathNotASocket(path: String)
    /// `operation` on `path` failed with `errno`.
    case socketSetupFailed(path: String, operation: String, errno: Int32)
    /// `start()` was called twice.
    case alreadyStarted
    /// The accepted channel offers no socket options, so the caller's identity cannot be read.
    case noPeerCredentials

    /// What is wrong and how to fix it.
    public var description: String {
        switch self {
        case .alreadyRunning(let path):
            return "Another offstaged is already listening on \(path). Stop it first, or give this one another "
                + "socket with --socket/$\(OffstageSocketPath.environmentVariable)."
        case .pathNotASocket(let path):
            return "\(path) exists and is not a socket, so offstaged will not replace it. Remove it, or choose "
                + "another socket with --socket/$\(OffstageSocketPath.environmentVariable)."
        case .socketSetupFailed(let path, let operation, let code):
            return "Cannot set up the socket \(path): \(operation) failed: \(String(cString: strerror(code))) "
                + "(errno \(code)). Check the permissions of its directory, or choose another socket with "
                + "--socket/$\(OffstageSocketPath.environmentVariable)."
        case .alreadyStarted:
            return "VarlinkServer.start() was called twice; a server starts once."
        case .noPeerCredentials:
            return "The accepted connection is not a socket channel, so the caller's credentials cannot be read."
        }
    }
}

/// The device and inode of a file: tells whether the socket file is still the one this server created.
struct VarlinkSocketFileIdentity: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64

    init?(path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

/// Preparing the socket path before binding.
enum VarlinkSocketFile {
    /// Creates missing parent directories (0700) and removes a stale socket at `path`.
    ///
    /// - Throws: `alreadyRunning` when a server accepts connections on `path`; `pathNotASocket` when `path` is some
    ///   other file; `socketSetupFailed` when a directory cannot be made or a stale socket cannot be removed.
    static func prepare(_ path: String) throws {
        try makeParentDirectories(of: path)
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw VarlinkServerError.socketSetupFailed(path: path, operation: "lstat", errno: errno)
        }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else { throw VarlinkServerError.pathNotASocket(path: path) }
        // A socket file outlives its server. Whether one is stale is known only by trying it.
        let probe: VarlinkConnection
        do {
            probe = try VarlinkConnection(path: path)
        } catch VarlinkConnectionError.connectFailed(_, let code) where code == ECONNREFUSED {
            guard unlink(path) == 0 || errno == ENOENT else {
                throw VarlinkServerError.socketSetupFailed(
                    path: path, operation: "unlink of a stale socket", errno: errno)
            }
            return
        } catch VarlinkConnectionError.connectFailed(_, let code) {
            throw VarlinkServerError.socketSetupFailed(path: path, operation: "connect (liveness check)", errno: code)
        }
        probe.close()
        throw VarlinkServerError.alreadyRunning(path: path)
    }

    /// A Unix stream socket bound at `path` and listening, close-on-exec.
    static func makeListeningSocket(_ path: String, backlog: Int32) throws -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw VarlinkServerError.socketSetupFailed(path: path, operation: "bind", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw VarlinkServerError.socketSetupFailed(path: path, operation: "socket", errno: errno)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw VarlinkServerError.socketSetupFailed(path: path, operation: "bind", errno: code)
        }
        guard listen(descriptor, backlog) == 0 else {
            let code = errno
            close(descriptor)
            unlink(path)
            throw VarlinkServerError.socketSetupFailed(path: path, operation: "listen", errno: code)
        }
        return descriptor
    }

    /// Closes a descriptor (a free function, which the server's own `close()` hides there).
    static func closeDescriptor(_ descriptor: Int32) {
        close(descriptor)
    }

    private static func makeParentDirectories(of path: String) throws {
        var directories: [String] = []
        var current = (path as NSString).deletingLastPathComponent
        while !current.isEmpty, current != "/", access(current, F_OK) != 0 {
            directories.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        for directory in directories.reversed() {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw VarlinkServerError.socketSetupFailed(path: path, operation: "mkdir \(directory)", errno: errno)
            }
        }
    }
}
