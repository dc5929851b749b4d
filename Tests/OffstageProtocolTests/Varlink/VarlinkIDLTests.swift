import OffstageProtocol
import Testing

/// An interface using every construct of the language.
private let example = """
    # An example interface.
    interface io.offstage.Example

    # A point.
    type Point (x: int, y: int)

    type Mood (happy, sad, other)

    type Everything (
      flag: bool,
      count: int,
      ratio: float,
      name: string,
      anything: object,
      maybe: ?string,
      list: []Point,
      map: [string]int,
      nested: ?[]?[string]Point,
      inline: (a: int, b: ?bool),
      choice: (left, right),
      mood: Mood
    )

    # Does nothing.
    method Ping() -> ()

    method Get(id: string, options: ?Everything) -> (result: Everything, moods: []Mood)

    error NotFound (id: string)
    error Unavailable ()
    """

@Suite("VarlinkIDLChecker")
struct VarlinkIDLTests {
    @Test("a valid interface using every construct is accepted and summarised")
    func valid() throws {
        let summary = try VarlinkIDLChecker.check(example)
        #expect(summary.name == "io.offstage.Example")
        #expect(summary.methods == ["Ping", "Get"])
        #expect(summary.types == ["Point", "Mood", "Everything"])
        #expect(summary.errors == ["NotFound", "Unavailable"])
    }

    @Test("the built-in interfaces are valid")
    func builtIn() throws {
        #expect(VarlinkInterfaceDescription.service.name == "org.varlink.service")
        #expect(VarlinkInterfaceDescription.service.methods == ["GetInfo", "GetInterfaceDescription"])
        #expect(VarlinkInterfaceDescription.service.errors.contains("ExpectedMore"))
        #expect(VarlinkInterfaceDescription.offstageProtocol.errors.contains("MessageTooLarge"))
        #expect(VarlinkInterfaceDescription("interface a.b\nmethod X() -> ()").qualified("X") == "a.b.X")
    }

    @Test(
        "typos are rejected with the line and what is wrong",
        arguments: [
            ("interface a.b\nmethod Ping(x: int -> ()", "unbalanced parentheses", 2),
            ("interface a.b\nmethod A(x: int\nmethod B() -> ()", "unbalanced parentheses", 2),
            ("interface a.b\nmethod Ping() ()", "needs '->'", 2),
            ("interface a.b\nmethod Ping()", "needs '->'", 2),
            ("interface a.b\nmethod Ping() -> (x: strin)", "'strin' is not a type", 2),
            ("interface a.b\nmethod Ping() -> (x: Thing)", "type 'Thing' is used but not declared", 2),
            ("interface a.b\n\nmethod ping() -> ()", "not a valid method name", 3),
            ("interface ab\nmethod Ping() -> ()", "not a valid interface name", 1),
            ("interface a..b\nmethod Ping() -> ()", "not a valid interface name", 1),
            ("method Ping() -> ()", "starts with `interface", 1),
            ("interface a.b\nmethod Ping() -> ()\nmethod Ping() -> ()", "declared twice", 3),
            ("interface a.b\nmethod Ping(x: int,) -> ()", "trailing ','", 2),
            ("interface a.b\nmethod Ping(x: ??int) -> ()", "'??'", 2),
            ("interface a.b\nmethod Ping(x: [int]int) -> ()", "only '[]' (array) and '[string]'", 2),
            ("interface a.b\nmethod Ping(x, y) -> ()", "needs a type", 2),
            ("interface a.b\ntype T (a, b: int)", "mixes enum values and typed fields", 2),
            ("interface a.b\nmethod Ping(x: int, x: int) -> ()", "appears twice", 2),
            ("interface a.b\nfunction Ping() -> ()", "expected `type`, `method` or `error`", 2),
            ("interface a.b\nerror Oops", "needs its fields in parentheses", 2),
            ("interface a.b", "declares no members", 1),
            ("interface a.b\nmethod Ping(bad__name: int) -> ()", "not a valid field name", 2),
        ]
    )
    func invalid(text: String, message: String, line: Int) {
        let error = #expect(throws: VarlinkIDLError.self) { try VarlinkIDLChecker.check(text) }
        #expect(error?.message.contains(message) == true, "message was: \(error?.message ?? "none")")
        #expect(error?.line == line, "\(error?.description ?? "")")
    }

    @Test("an interface description rejects invalid text with a located error")
    func descriptionChecks() {
        let error = #expect(throws: VarlinkIDLError.self) {
            try VarlinkInterfaceDescription(validating: "interface io.offstage.App\nmethod Ping( -> ()")
        }
        #expect(error?.description.hasPrefix("interface io.offstage.App, line 2, column") == true)
    }
}
