import Foundation

/// The fields an interface definition declares for a method's input and output, or for a type: name → optional.
/// Enough of the Varlink grammar to compare the IDL text with the Swift types that claim to implement it.
enum IDLFields {
    /// The input and output fields of `method`.
    static func method(_ name: String, in text: String) -> (input: [String: Bool], output: [String: Bool])? {
        guard let start = text.range(of: "method \(name)(") else { return nil }
        let afterName = text[start.upperBound...]
        guard let (input, rest) = group(afterName), let arrow = rest.range(of: "->") else { return nil }
        let afterArrow = rest[arrow.upperBound...].drop { $0 == " " || $0 == "\n" }
        guard afterArrow.first == "(", let (output, _) = group(afterArrow.dropFirst()) else { return nil }
        return (fields(input), fields(output))
    }

    /// The fields of `type`.
    static func type(_ name: String, in text: String) -> [String: Bool]? {
        guard let start = text.range(of: "type \(name) (") else { return nil }
        return group(text[start.upperBound...]).map { fields($0.0) }
    }

    /// The text up to the parenthesis that closes one already open, and what follows it.
    private static func group(_ text: Substring) -> (Substring, Substring)? {
        var depth = 1
        for index in text.indices {
            if text[index] == "(" { depth += 1 }
            if text[index] == ")" { depth -= 1 }
            if depth == 0 { return (text[..<index], text[text.index(after: index)...]) }
        }
        return nil
    }

    /// `name: ?type` entries at the top level, comments removed.
    private static func fields(_ body: Substring) -> [String: Bool] {
        let lines = body.split(separator: "\n").map { line in line.split(separator: "#", maxSplits: 1).first ?? "" }
        var depth = 0
        var entries: [String] = []
        var current = ""
        for character in lines.joined(separator: " ") {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if character == ",", depth == 0 {
                entries.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        entries.append(current)
        var result: [String: Bool] = [:]
        for entry in entries {
            let parts = entry.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else { continue }
            result[parts[0]] = parts[1].hasPrefix("?")
        }
        return result
    }

    /// The keys a value encodes to (with every optional set, they are all the keys it can have).
    static func keys(of value: some Encodable) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any]
        return Set(object?.keys ?? [String: Any]().keys)
    }
}
