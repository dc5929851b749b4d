import Foundation

/// One committed fuzz input, read from the repository (found from `#filePath`, so the tests need no resources in
/// Package.swift). Shared by the test targets that replay the fuzz targets' seeds and regressions.
public struct FuzzInput: Sendable, CustomStringConvertible {
    /// Where the input lives under `Fuzz/`, e.g. `Regressions/json-envelope/utf16-number-foundation-reads`.
    public let path: String
    /// The input's bytes.
    public let bytes: [UInt8]

    public var description: String { path }

    /// The repository's `Fuzz` folder: this file is `Tests/FuzzInputs/FuzzInput.swift`.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The seeds and the regression inputs of `target`, in a stable order.
    public static func all(of target: String) -> [FuzzInput] {
        ["Corpus", "Regressions"].flatMap { folder in
            let directory = root.appendingPathComponent(folder).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.sorted().compactMap { name in
                (try? Data(contentsOf: directory.appendingPathComponent(name))).map {
                    FuzzInput(path: "\(folder)/\(target)/\(name)", bytes: [UInt8]($0))
                }
            }
        }
    }
}
