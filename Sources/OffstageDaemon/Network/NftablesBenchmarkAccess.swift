/// libnftables as the benchmarks package reaches it (`@_spi(Benchmarks) import OffstageDaemon`): the data controls
/// benchmark applies a rule of its own through the same library call the daemon makes, as the baseline for the time
/// from a setting change to the daemon's rule in force. Nothing of the filter's own API is made public.
@_spi(Benchmarks)
public final class NftablesBenchmarkAccess: Sendable {
    private let nftables: Nftables

    /// Opens libnftables; throws where it is missing.
    public init() throws { nftables = try Nftables() }

    /// Runs a batch of nft commands as one transaction; returns the JSON answer.
    @discardableResult
    public func run(_ commands: String) throws -> String { try nftables.run(commands) }

    /// A cgroup folder's path as nftables takes it (relative to `/sys/fs/cgroup`); nil when it is not below it.
    public static func relativeCgroup(_ path: String) -> String? { NetworkCgroupPath.relative(path) }
}
