import Foundation

/// Writes one line, prefixed with `offstage:`, to the app's standard error: how the SDK tells a developer that a
/// call did not do what they asked, and what to change.
func reportToDeveloper(_ line: String) {
    FileHandle.standardError.write(Data("offstage: \(line)\n".utf8))
}
