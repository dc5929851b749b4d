/// Text a caller gave, as an error message shows it: in quotes, on one line, and short.
///
/// Errors name the thing that was wrong, and that thing is often the caller's own input: an id with a newline would
/// break the message's one line (and could forge a second line in a log), and 100,000 characters would bury the fix.
/// Control characters are escaped the way Swift writes them, and long text is cut with its length given.
public enum QuotedText {
    /// The longest quoted text, in characters, before it is cut.
    public static let limit = 80

    /// `text` in single quotes, escaped and cut to ``limit`` characters.
    public static func quote(_ text: some StringProtocol) -> String {
        var escaped = ""
        var shown = 0
        for character in text {
            guard shown < limit else { break }
            for scalar in character.unicodeScalars {
                switch scalar {
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                case "\t": escaped += "\\t"
                case "'": escaped += "\\'"
                case "\\": escaped += "\\\\"
                default:
                    if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value)
                        || scalar.properties.generalCategory == .lineSeparator
                        || scalar.properties.generalCategory == .paragraphSeparator
                    {
                        escaped += "\\u{\(String(scalar.value, radix: 16))}"
                    } else {
                        escaped.unicodeScalars.append(scalar)
                    }
                }
            }
            shown += 1
        }
        let count = text.count
        return count > limit ? "'\(escaped)…' (\(count) characters)" : "'\(escaped)'"
    }
}
