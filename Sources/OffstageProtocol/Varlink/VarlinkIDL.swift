/// A syntax error in a Varlink interface description, with where it is.
public struct VarlinkIDLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The interface's name, when the error comes after it was read.
    public var interface: String?
    /// 1-based line of the error.
    public var line: Int
    /// 1-based column (in UTF-8 bytes) of the error.
    public var column: Int
    /// What is wrong and, where it helps, how to write it instead.
    public var message: String

    /// An error at `line`:`column`.
    public init(interface: String? = nil, line: Int, column: Int, message: String) {
        self.interface = interface
        self.line = line
        self.column = column
        self.message = message
    }

    /// `interface io.offstage.App, line 3, column 20: expected '->' ...`.
    public var description: String {
        let place = "line \(line), column \(column): \(message)"
        return interface.map { "interface \($0), \(place)" } ?? place
    }
}

/// What a syntax check found in a valid interface description.
public struct VarlinkIDLSummary: Sendable, Hashable {
    /// The interface name, e.g. `io.offstage.App`.
    public var name: String
    /// The method names, unqualified, in declaration order.
    public var methods: [String]
    /// The type names, in declaration order.
    public var types: [String]
    /// The error names, unqualified, in declaration order.
    public var errors: [String]
}

/// A syntax checker for the Varlink interface definition language.
///
/// It accepts `interface <name>` followed by `type Name (...)`, `method Name(...) -> (...)` and
/// `error Name (...)` members; field types `bool`, `int`, `float`, `string`, `object`, declared type names, inline
/// structs `(a: int)` and enums `(a, b)`, with `?`, `[]` and `[string]` prefixes; and `#` comments. Beyond syntax it
/// checks that names are not declared twice and that every type name used is declared. It builds no type model:
/// its job is to catch the typos a hand-written interface text gets (an unbalanced parenthesis, a method without
/// `->`, a misspelt type) before a client's parser does.
public enum VarlinkIDLChecker {
    /// Checks `text` and returns what it declares.
    ///
    /// - Throws: `VarlinkIDLError` at the first problem found.
    public static func check(_ text: String) throws(VarlinkIDLError) -> VarlinkIDLSummary {
        var parser = IDLParser(text)
        return try parser.parseInterface()
    }
}

private struct IDLParser {
    private let bytes: [UInt8]
    private var position = 0
    private var interfaceName: String?
    private var summary = VarlinkIDLSummary(name: "", methods: [], types: [], errors: [])
    private var declared: [String: String] = [:]  // member name → kind, to catch duplicates
    private var references: [(name: String, position: Int)] = []

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    mutating func parseInterface() throws(VarlinkIDLError) -> VarlinkIDLSummary {
        skipBlank()
        let keyword = readWord()
        guard keyword == "interface" else {
            throw error("an interface description starts with `interface <name>`, found '\(keyword)'")
        }
        try requireBlank(after: "interface")
        let start = position
        let name = readWhile { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
        guard isValidInterfaceName(name) else {
            throw error(
                "'\(name)' is not a valid interface name: use reverse-domain form like io.offstage.App "
                    + "(dot-separated parts of letters, digits and inner dashes)",
                at: start
            )
        }
        interfaceName = name
        summary.name = name
        skipBlank()
        guard !atEnd else { throw error("interface \(name) declares no members; add a method, type or error") }
        while !atEnd {
            try parseMember()
            skipBlank()
        }
        for reference in references where declared[reference.name] != "type" {
            throw error(
                "type '\(reference.name)' is used but not declared; declare it with `type \(reference.name) (...)` "
                    + "or use one of bool, int, float, string, object",
                at: reference.position
            )
        }
        return summary
    }

    // MARK: Members

    private mutating func parseMember() throws(VarlinkIDLError) {
        let start = position
        let keyword = readWord()
        switch keyword {
        case "type":
            try requireBlank(after: "type")
            let name = try readMemberName(kind: "type")
            skipBlank()
            guard peek == UInt8(ascii: "(") else {
                throw error("type \(name) needs a definition in parentheses: `(field: type, ...)` or `(a, b)`")
            }
            _ = try parseParenthesized(context: "type \(name)", allowEnum: true)
            try declare(name, kind: "type", at: start)
            summary.types.append(name)
        case "method":
            try requireBlank(after: "method")
            let name = try readMemberName(kind: "method")
            skipBlank()
            guard peek == UInt8(ascii: "(") else {
                throw error("method \(name) needs its input in parentheses: `method \(name)(...) -> (...)`")
            }
            _ = try parseParenthesized(context: "the input of method \(name)", allowEnum: false)
            skipBlank()
            guard consume("->") else {
                throw error(
                    "method \(name) needs '->' between its input and its output: `method \(name)(...) -> (...)`")
            }
            skipBlank()
            guard peek == UInt8(ascii: "(") else {
                throw error("method \(name) needs its output in parentheses after '->', e.g. `-> ()`")
            }
            _ = try parseParenthesized(context: "the output of method \(name)", allowEnum: false)
            try declare(name, kind: "method", at: start)
            summary.methods.append(name)
        case "error":
            try requireBlank(after: "error")
            let name = try readMemberName(kind: "error")
            skipBlank()
            guard peek == UInt8(ascii: "(") else {
                throw error("error \(name) needs its fields in parentheses, `()` when it has none")
            }
            _ = try parseParenthesized(context: "error \(name)", allowEnum: false)
            try declare(name, kind: "error", at: start)
            summary.errors.append(name)
        case "":
            throw error("expected `type`, `method` or `error`, found '\(describeCurrent())'")
        default:
            throw error("expected `type`, `method` or `error`, found '\(keyword)'", at: start)
        }
    }

    private mutating func declare(_ name: String, kind: String, at start: Int) throws(VarlinkIDLError) {
        if let previous = declared[name] {
            throw error(
                "'\(name)' is declared twice (as \(previous) and as \(kind)); member names must be unique", at: start)
        }
        declared[name] = kind
    }

    private enum ListKind { case structure, enumeration }

    /// `( field: type, ... )` or `( a, b, ... )`, starting at the `(`.
    private mutating func parseParenthesized(context: String, allowEnum: Bool) throws(VarlinkIDLError) -> ListKind {
        let open = position
        position += 1
        skipBlank()
        if consume(")") { return .structure }
        var kind: ListKind?
        var names: Set<String> = []
        while true {
            guard !atEnd else { throw unclosed(open, context: context) }
            let fieldStart = position
            let field = readWhile { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
            guard isValidFieldName(field) else {
                if field.isEmpty { throw error("expected a field name in \(context), found '\(describeCurrent())'") }
                throw error(
                    "'\(field)' is not a valid field name in \(context): start with a letter, then letters, digits "
                        + "and single underscores",
                    at: fieldStart
                )
            }
            guard names.insert(field).inserted else {
                throw error("field '\(field)' appears twice in \(context)", at: fieldStart)
            }
            skipBlank()
            let isField = consume(":")
            switch (kind, isField) {
            case (nil, _): kind = isField ? .structure : .enumeration
            case (.structure?, false):
                throw error("field '\(field)' in \(context) needs a type: `\(field): string`", at: fieldStart)
            case (.enumeration?, true):
                throw error("\(context) mixes enum values and typed fields; use one or the other", at: fieldStart)
            default: break
            }
            if isField {
                skipBlank()
                try parseType(context: "field '\(field)' of \(context)", afterMaybe: false)
                skipBlank()
            } else if !allowEnum && kind == .enumeration {
                throw error("field '\(field)' in \(context) needs a type: `\(field): string`", at: fieldStart)
            }
            if consume(",") {
                skipBlank()
                if peek == UInt8(ascii: ")") { throw error("trailing ',' in \(context); remove it") }
                continue
            }
            if consume(")") { return kind ?? .structure }
            if atEnd || startsMember || bytes[position...].starts(with: Array("->".utf8)) {
                throw unclosed(open, context: context)
            }
            throw error("expected ',' or ')' in \(context), found '\(describeCurrent())'")
        }
    }

    private mutating func parseType(context: String, afterMaybe: Bool) throws(VarlinkIDLError) {
        let start = position
        if consume("?") {
            if afterMaybe { throw error("'??' in \(context): a type can be optional only once", at: start) }
            return try parseType(context: context, afterMaybe: true)
        }
        if consume("[]") { return try parseType(context: context, afterMaybe: false) }
        if consume("[string]") { return try parseType(context: context, afterMaybe: false) }
        if peek == UInt8(ascii: "[") {
            throw error("in \(context): only '[]' (array) and '[string]' (map) may stand before a type")
        }
        if peek == UInt8(ascii: "(") {
            _ = try parseParenthesized(context: "an inline type in \(context)", allowEnum: true)
            return
        }
        let word = readWhile { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
        switch word {
        case "bool", "int", "float", "string", "object": return
        case "":
            if atEnd { throw error("\(context) ends before its type") }
            throw error("expected a type in \(context), found '\(describeCurrent())'")
        default:
            guard isValidMemberName(word) else {
                throw error(
                    "'\(word)' is not a type in \(context): use bool, int, float, string, object or a declared "
                        + "type name (which starts with a capital letter)",
                    at: start
                )
            }
            references.append((word, start))
        }
    }

    // MARK: Names

    private mutating func readMemberName(kind: String) throws(VarlinkIDLError) -> String {
        let start = position
        let name = readWhile { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
        guard isValidMemberName(name) else {
            if name.isEmpty { throw error("expected a \(kind) name, found '\(describeCurrent())'") }
            throw error(
                "'\(name)' is not a valid \(kind) name: start with a capital letter, then letters and digits",
                at: start
            )
        }
        return name
    }

    private func isValidInterfaceName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, let first = parts[0].utf8.first, isLetter(first) else { return false }
        return parts.allSatisfy { part in
            guard let head = part.utf8.first, let tail = part.utf8.last else { return false }
            return isAlphanumeric(head) && isAlphanumeric(tail)
                && part.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
        }
    }

    private func isValidMemberName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else { return false }
        return name.utf8.allSatisfy(isAlphanumeric)
    }

    private func isValidFieldName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first), name.utf8.last != UInt8(ascii: "_") else { return false }
        return !name.contains("__")
    }

    // MARK: Scanning

    private var atEnd: Bool { position >= bytes.count }

    /// Whether the text ahead starts a new member, which inside parentheses means one was left open.
    private var startsMember: Bool {
        ["type ", "method ", "error "].contains { keyword in
            let tokenBytes = Array(keyword.utf8)
            return position + tokenBytes.count <= bytes.count
                && bytes[position..<position + tokenBytes.count].elementsEqual(tokenBytes)
        }
    }
    private var peek: UInt8? { atEnd ? nil : bytes[position] }

    private mutating func skipBlank() {
        while let byte = peek {
            if byte == UInt8(ascii: "#") {
                while let next = peek, next != UInt8(ascii: "\n") { position += 1 }
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
                || byte == UInt8(ascii: "\r")
            {
                position += 1
            } else {
                return
            }
        }
    }

    private mutating func requireBlank(after keyword: String) throws(VarlinkIDLError) {
        let before = position
        skipBlank()
        if position == before { throw error("expected a space after '\(keyword)'") }
    }

    private mutating func consume(_ token: String) -> Bool {
        let tokenBytes = Array(token.utf8)
        guard position + tokenBytes.count <= bytes.count,
            bytes[position..<position + tokenBytes.count].elementsEqual(tokenBytes)
        else { return false }
        position += tokenBytes.count
        return true
    }

    private mutating func readWord() -> String {
        readWhile(isLetter)
    }

    private mutating func readWhile(_ accept: (UInt8) -> Bool) -> String {
        let start = position
        while let byte = peek, accept(byte) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private func describeCurrent() -> String {
        guard !atEnd else { return "end of text" }
        var end = position
        while end < bytes.count, end - position < 20, bytes[end] != UInt8(ascii: "\n") { end += 1 }
        return String(decoding: bytes[position..<end], as: UTF8.self)
    }

    private func unclosed(_ open: Int, context: String) -> VarlinkIDLError {
        error("unbalanced parentheses: the '(' of \(context) is never closed", at: open)
    }

    private func error(_ message: String, at offset: Int? = nil) -> VarlinkIDLError {
        let (line, column) = location(of: offset ?? position)
        return VarlinkIDLError(interface: interfaceName, line: line, column: column, message: message)
    }

    private func location(of offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return (line, offset - lineStart + 1)
    }
}

private func isLetter(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
}

private func isAlphanumeric(_ byte: UInt8) -> Bool {
    isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
}
