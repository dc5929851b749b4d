import Foundation

/// The Varlink interface definition language, read far enough to know each method's parameters and their types, so
/// that a test can build a call for every method the daemon serves from the definitions it serves
/// (`org.varlink.service.GetInterfaceDescription`), not from a list kept by hand.
struct IDLSchema {
    /// A Varlink type.
    indirect enum Kind: Hashable {
        case bool, int, float, string, object
        case optional(Kind)
        case array(Kind)
        case map(Kind)
        case enumeration([String])
        case structure([Field])
        case named(String)
    }

    /// A field of a struct or of a method's input.
    struct Field: Hashable {
        var name: String
        var kind: Kind
    }

    /// The interface's name.
    var name: String
    /// Each method's input fields, in the order declared.
    var methods: [(name: String, input: [Field])] = []
    /// The declared types by name.
    var types: [String: Kind] = [:]
    /// The declared errors' names, unqualified.
    var errors: Set<String> = []

    /// Parses `text`; throws on anything this reader does not know, so a new construct is not silently skipped.
    init(_ text: String) throws {
        var tokens = Self.tokens(text)[...]
        func next() throws -> String {
            guard let token = tokens.popFirst() else { throw HarnessError("IDL: unexpected end") }
            return token
        }
        func expect(_ token: String) throws {
            let found = try next()
            guard found == token else { throw HarnessError("IDL: expected \(token), found \(found)") }
        }
        func type() throws -> Kind {
            let token = try next()
            switch token {
            case "?": return .optional(try type())
            case "[":
                let inner = try next()
                if inner == "]" { return .array(try type()) }
                guard inner == "string" else { throw HarnessError("IDL: map key \(inner)") }
                try expect("]")
                return .map(try type())
            case "(": return try group()
            case "bool": return .bool
            case "int": return .int
            case "float": return .float
            case "string": return .string
            case "object": return .object
            default: return .named(token)
            }
        }
        // After "(": an enum (names only) or a struct (name: type, …), up to ")".
        func group() throws -> Kind {
            var fields: [Field] = []
            var cases: [String] = []
            if tokens.first == ")" {
                tokens.removeFirst()
                return .structure([])
            }
            while true {
                let name = try next()
                if tokens.first == ":" {
                    tokens.removeFirst()
                    fields.append(Field(name: name, kind: try type()))
                } else {
                    cases.append(name)
                }
                let separator = try next()
                if separator == ")" { break }
                guard separator == "," else { throw HarnessError("IDL: expected , or ), found \(separator)") }
            }
            return cases.isEmpty ? .structure(fields) : .enumeration(cases)
        }
        try expect("interface")
        name = try next()
        while let keyword = tokens.popFirst() {
            let declared = try next()
            switch keyword {
            case "type": types[declared] = try type()
            case "method":
                try expect("(")
                guard case .structure(let input) = try group() else { throw HarnessError("IDL: \(declared) input") }
                try expect("->")
                try expect("(")
                _ = try group()
                methods.append((declared, input))
            case "error":
                try expect("(")
                _ = try group()
                errors.insert(declared)
            default: throw HarnessError("IDL: unknown keyword \(keyword)")
            }
        }
    }

    /// The type `kind` names, resolved through the declared types.
    func resolved(_ kind: Kind) -> Kind {
        if case .named(let name) = kind, let declared = types[name] { return resolved(declared) }
        return kind
    }

    private static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var word = ""
        func flush() {
            if !word.isEmpty { tokens.append(word) }
            word = ""
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            var characters = code[...]
            while let character = characters.popFirst() {
                if character == "-", characters.first == ">" {
                    characters.removeFirst()
                    flush()
                    tokens.append("->")
                } else if "(),:?[]".contains(character) {
                    flush()
                    tokens.append(String(character))
                } else if character.isWhitespace {
                    flush()
                } else {
                    word.append(character)
                }
            }
            flush()
        }
        return tokens
    }
}
