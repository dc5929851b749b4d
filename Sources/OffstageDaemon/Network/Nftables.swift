import Glibc
import Synchronization

/// The kernel's nftables through libnftables, the library the `nft` program is built on (`nft_run_cmd_from_buffer`):
/// a batch of commands is one netlink transaction, all or nothing, with no process spawned (`nft` costs ~4 ms a
/// call here, too slow beside a lifecycle transition).
///
/// The library is opened at run time (`libnftables.so.1`, Debian package `nftables`), not linked: a machine without
/// it still runs the daemon, with the data controls advisory and `offstage status` saying what to install.
/// One context, used under a lock: libnftables contexts are not thread-safe.
final class Nftables: Sendable {
    private typealias NewContext = @convention(c) (UInt32) -> OpaquePointer?
    private typealias FreeContext = @convention(c) (OpaquePointer?) -> Void
    private typealias ContextCall = @convention(c) (OpaquePointer?) -> Int32
    private typealias GetBuffer = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    private typealias RunCommands = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    private typealias SetFlags = @convention(c) (OpaquePointer?, UInt32) -> Void

    /// The library's soname.
    static let library = "libnftables.so.1"
    /// `NFT_CTX_OUTPUT_JSON`: answers (counters) come as JSON.
    private static let outputJSON: UInt32 = 1 << 4

    private struct Functions: @unchecked Sendable {
        let free: FreeContext
        let run: RunCommands
        let output: GetBuffer
        let error: GetBuffer
    }

    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let functions: Functions
    private let context: Mutex<Context>

    /// Opens the library and makes a context with its output and errors kept in buffers, as JSON.
    init() throws(NftablesError) {
        guard let handle = dlopen(Self.library, RTLD_NOW | RTLD_LOCAL) else {
            throw .libraryMissing(String(cString: dlerror()))
        }
        func symbol<T>(_ name: String, as type: T.Type) throws(NftablesError) -> T {
            guard let address = dlsym(handle, name) else { throw .libraryMissing("\(Self.library) has no \(name)") }
            return unsafeBitCast(address, to: type)
        }
        let new = try symbol("nft_ctx_new", as: NewContext.self)
        let bufferOutput = try symbol("nft_ctx_buffer_output", as: ContextCall.self)
        let bufferError = try symbol("nft_ctx_buffer_error", as: ContextCall.self)
        let setFlags = try symbol("nft_ctx_output_set_flags", as: SetFlags.self)
        functions = Functions(
            free: try symbol("nft_ctx_free", as: FreeContext.self),
            run: try symbol("nft_run_cmd_from_buffer", as: RunCommands.self),
            output: try symbol("nft_ctx_get_output_buffer", as: GetBuffer.self),
            error: try symbol("nft_ctx_get_error_buffer", as: GetBuffer.self))
        // NFT_CTX_DEFAULT is 0.
        guard let pointer = new(0) else { throw .libraryMissing("nft_ctx_new failed") }
        guard bufferOutput(pointer) == 0, bufferError(pointer) == 0 else {
            functions.free(pointer)
            throw .libraryMissing("libnftables cannot buffer its output")
        }
        setFlags(pointer, Self.outputJSON)
        context = Mutex(Context(pointer: pointer))
    }

    deinit {
        context.withLock { functions.free($0.pointer) }
    }

    /// Runs a batch of commands (one per line) as one transaction; returns what the kernel answered (JSON, for
    /// listing and resetting counters). Nothing of a batch that fails is applied.
    @discardableResult
    func run(_ commands: String) throws(NftablesError) -> String {
        let result: Result<String, NftablesError> = context.withLock { context in
            let status = commands.withCString { functions.run(context.pointer, $0) }
            // Reading a buffer empties it for the next command.
            let output = functions.output(context.pointer).map { String(cString: $0) } ?? ""
            let error = functions.error(context.pointer).map { String(cString: $0) } ?? ""
            if status != 0 {
                let message = error.isEmpty ? "nftables refused the batch (status \(status))" : error
                return .failure(.refused(message.trimmingSuffix()))
            }
            return .success(output)
        }
        return try result.get()
    }
}

/// Why nftables could not be used.
enum NftablesError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The library is not installed (or lacks a function).
    case libraryMissing(String)
    /// The kernel or the library refused a batch (a missing right, an unknown table), with what it said.
    case refused(String)

    var description: String {
        switch self {
        case .libraryMissing(let detail): "libnftables is not available (\(detail))"
        case .refused(let message): message
        }
    }

    /// Whether the refusal is for want of the right to change the firewall (`CAP_NET_ADMIN`).
    var isPermissionDenied: Bool {
        guard case .refused(let message) = self else { return false }
        return message.contains("Operation not permitted") || message.contains("Permission denied")
    }
}

extension String {
    fileprivate func trimmingSuffix() -> String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
