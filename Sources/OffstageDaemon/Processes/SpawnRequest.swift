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
