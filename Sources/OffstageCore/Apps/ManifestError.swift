/// Why a manifest was refused (SPEC MAN-2): the file, the key, what is wrong and how to fix it.
public struct ManifestError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The manifest file, as the caller named it.
    public var file: String
    /// The key that is wrong, or nil when the file as a whole cannot be read.
    public var key: String?
    /// What is wrong.
    public var problem: String
    /// What to do about it.
    public var fix: String

    /// Creates a manifest error.
    public init(file: String, key: String?, problem: String, fix: String) {
        self.file = file
        self.key = key
        self.problem = problem
        self.fix = fix
    }

    public var description: String {
        if let key { return "\(file): key '\(key)': \(problem); fix: \(fix)" }
        return "\(file): \(problem); fix: \(fix)"
    }
}
