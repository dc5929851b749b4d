import Glibc

/// Checks a `SpawnRequest`, opens what the child needs and forks it through `offstage_spawn`.
struct ProcessLauncher: Sendable {
    let syscalls: Syscalls

    /// Spawns the request; the child writes itself into each `cgroupProcsPaths` file before exec.
    func spawn(_ request: SpawnRequest, cgroupProcsPaths: [String]) throws -> Int32 {
        guard request.executable.hasPrefix("/") else {
            throw ProcessControlError.invalidRequest(
                "executable '\(request.executable)' is not an absolute path; give the full path to the program")
        }
        guard !request.workingDirectory.isEmpty else {
            throw ProcessControlError.invalidRequest("the working directory is empty; give an existing directory")
        }
        var opened: [Int32] = []
        defer { opened.forEach(syscalls.close) }

        var outputFD: Int32 = -1
        if let outputPath = request.outputPath {
            do {
                outputFD = try syscalls.open(outputPath, O_WRONLY | O_CREAT | O_APPEND, mode: 0o644)
            } catch let error as ProcessControlError {
                throw ProcessControlError.cannotStart(
                    path: request.executable, step: "opening output file \(outputPath)", errno: error.errno ?? EIO)
            }
            opened.append(outputFD)
        }
        var cgroupFDs: [Int32] = []
        for path in cgroupProcsPaths {
            let fd = try syscalls.open(path, O_WRONLY)
            opened.append(fd)
            cgroupFDs.append(fd)
        }
        let environment = request.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try syscalls.spawn(
            path: request.executable,
            argv: [request.executable] + request.arguments,
            environment: environment,
            directory: request.workingDirectory,
            outputFD: outputFD,
            cgroupProcsFDs: cgroupFDs
        )
    }
}
