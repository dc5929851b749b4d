import Foundation
import OffstageDaemon
import OffstageProtocol
import Synchronization
import Testing

/// The Python `varlink` package's command line: a Varlink client written by other people, with its own IDL parser.
enum PythonVarlinkCLI {
    /// Whether `python3 -c "import varlink"` works here.
    static let isAvailable: Bool = (try? run(["-c", "import varlink"]).status) == 0

    /// Runs `python3 arguments…`, killing it after `timeout`.
    static func run(_ arguments: [String], timeout: TimeInterval = 60) throws -> (
        status: Int32, output: String, error: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        // Both pipes are read to the end before waiting, so a chatty process cannot block on a full pipe.
        let errorData = Mutex(Data())
        let errorRead = DispatchSemaphore(value: 0)
        Thread {
            let data = error.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            errorRead.signal()
        }.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        errorRead.wait()
        process.waitUntilExit()
        watchdog.cancel()
        return (
            process.terminationStatus,
            String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData.withLock { $0 }, as: UTF8.self)
        )
    }

    /// `python3 -m varlink.cli arguments…`, which must succeed.
    static func cli(_ arguments: [String]) throws -> String {
        let result = try run(["-m", "varlink.cli"] + arguments)
        guard result.status == 0 else {
            throw IPCTestFailure("varlink.cli \(arguments) exited \(result.status): \(result.error)\(result.output)")
        }
        return result.output
    }
}

@Suite("Interoperability with the Python varlink client")
struct VarlinkInteropTests {
    @Test(
        "varlink.cli calls GetInfo, a method with parameters, a more stream, and reads our interface descriptions",
        .enabled(
            if: PythonVarlinkCLI.isAvailable,
            "The Python varlink package is not importable: install it with `pip install varlink` to run this test"
        )
    )
    func pythonClient() async throws {
        try await withIPCTestServer { _, path, _ in
            let address = "unix:\(path)"

            let infoText = try PythonVarlinkCLI.cli(["call", "\(address)/org.varlink.service.GetInfo"])
            let info = try JSONDecoder().decode(VarlinkServiceInfo.self, from: Data(infoText.utf8))
            #expect(info.vendor == "Offstage")
            #expect(info.interfaces.contains("io.offstage.Test"))

            // `call` first fetches io.offstage.Test's description and parses it with Python's own IDL parser.
            let sumText = try PythonVarlinkCLI.cli(["call", "\(address)/io.offstage.Test.Add", #"{"a": 2, "b": 3}"#])
            #expect(try JSONDecoder().decode(IPCSum.self, from: Data(sumText.utf8)) == IPCSum(sum: 5))

            let streamText = try PythonVarlinkCLI.cli([
                "call", "-m", "\(address)/io.offstage.Test.Count", #"{"to": 3}"#,
            ])
            let values = streamText.split(separator: "}").compactMap { chunk -> Int? in
                guard let colon = chunk.lastIndex(of: ":") else { return nil }
                return Int(chunk[chunk.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(values == [1, 2, 3], "output was: \(streamText)")

            let failure = try PythonVarlinkCLI.run(
                ["-m", "varlink.cli", "call", "\(address)/io.offstage.Test.Add", #"{"a": "two", "b": 3}"#]
            )
            #expect((failure.error + failure.output).contains("org.varlink.service.InvalidParameter"))

            for interface in ["io.offstage.Test", "org.varlink.service", "io.offstage.Protocol"] {
                let help = try PythonVarlinkCLI.cli(["help", "\(address)/\(interface)"])
                #expect(help.contains("interface \(interface)"), "help for \(interface): \(help)")
            }

            let infoSummary = try PythonVarlinkCLI.cli(["info", address])
            #expect(infoSummary.contains("Vendor: Offstage"))
            #expect(infoSummary.contains("io.offstage.Test"))
        }
    }
}
