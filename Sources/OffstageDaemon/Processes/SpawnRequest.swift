/// What to launch and how.
public struct SpawnRequest: Sendable, Hashable {
    /// Absolute path of the program; it is also passed as argv[0].
    public var executable: String
    /// Arguments after argv[0].
    public var arguments: [String]
    /// The complete environment of the new process (nothing of the daemon's is inherited).
    public var environment: [String: String]
    /// The working directory; must exist.
    public var workingDirectory: String
    /// File that receives stdout and stderr, opened for appending and created if missing; nil for /dev/null.
    public var outputPath: String?
    /// `cgroup.procs` files of other hierarchies the process joins before exec, besides its group's own: the app's
    /// group under a cgroup v1 memory controller (SPEC MEM-2), so that its limit holds from the first instruction.
    public var alsoJoin: [String] = []

    /// Creates a request.
    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String] = [:],
        workingDirectory: String = "/",
        outputPath: String? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.outputPath = outputPath
    }
}
