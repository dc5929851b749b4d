import Foundation
import OffstageProtocol
import Testing

private struct AddParameters: Codable, Equatable {
    var a: Int
    var b: Int
}

private struct Nested: Codable, Equatable {
    struct Options: Codable, Equatable {
        var timeout: Int
    }

    var name: String
    var options: Options
    var tags: [String]?
}

private func json(_ data: Data) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: data)
}

@Suite("VarlinkCodec")
struct VarlinkCodecTests {
    @Test("a call encodes method and parameters and leaves out false flags")
    func encodeCall() throws {
        let plain = try VarlinkCodec.encodeCall("io.offstage.Test.Add", AddParameters(a: 1, b: 2))
        #expect(try json(plain) == ["method": "io.offstage.Test.Add", "parameters": ["a": 1, "b": 2]])
        let streaming = try VarlinkCodec.encodeCall("io.offstage.Test.Count", VarlinkEmpty(), more: true)
        #expect(try json(streaming) == ["method": "io.offstage.Test.Count", "parameters": [:], "more": true])
        let quiet = try VarlinkCodec.encodeCall("io.offstage.Test.Notify", VarlinkEmpty(), oneway: true)
        #expect(try json(quiet)["oneway"] == true)
        #expect(try json(quiet)["more"] == nil)
    }

    @Test("the header and the parameters decode from the same bytes")
    func decodeCall() throws {
        let message = try VarlinkCodec.encodeCall("io.offstage.Test.Add", AddParameters(a: 3, b: 4), more: true)
        let header = try VarlinkCodec.decodeCallHeader(message)
        #expect(header == VarlinkCallHeader(method: "io.offstage.Test.Add", more: true))
        #expect(header.interface == "io.offstage.Test")
        #expect(header.memberName == "Add")
        #expect(try VarlinkCodec.decodeCallParameters(message, as: AddParameters.self) == AddParameters(a: 3, b: 4))
    }

    @Test("a call without parameters, or with null parameters, has {}")
    func missingParameters() throws {
        for text in [#"{"method":"a.b.C"}"#, #"{"method":"a.b.C","parameters":null}"#] {
            let message = Data(text.utf8)
            #expect(try VarlinkCodec.decodeCallParameters(message, as: VarlinkEmpty.self) == VarlinkEmpty())
            #expect(try VarlinkCodec.decodeCallParameters(message, as: [String: JSONValue].self) == [:])
            // A required field is then reported missing by name.
            let error = #expect(throws: VarlinkError.self) {
                try VarlinkCodec.decodeCallParameters(message, as: AddParameters.self)
            }
            #expect(error?.name == VarlinkError.Name.invalidParameter)
            #expect(error?.parameters["parameter"] == "a")
        }
    }

    @Test(
        "parameters of the wrong shape are InvalidParameter naming the parameter",
        arguments: [
            (#"{"a":"one","b":2}"#, "a", "a: expected an integer"),
            (#"{"a":1}"#, "b", "b: required but missing"),
            (#"{"a":null,"b":2}"#, "a", "a: expected an integer, found null"),
        ]
    )
    func invalidParameter(parameters: String, parameter: String, description: String) throws {
        let message = Data(#"{"method":"io.offstage.Test.Add","parameters":\#(parameters)}"#.utf8)
        let error = #expect(throws: VarlinkError.self) {
            try VarlinkCodec.decodeCallParameters(message, as: AddParameters.self)
        }
        #expect(error?.name == "org.varlink.service.InvalidParameter")
        #expect(error?.parameters["parameter"]?.stringValue == parameter)
        #expect(error?.parameters["description"]?.stringValue == description)
    }

    @Test("a nested failure names the top-level parameter and describes the whole path")
    func nestedInvalidParameter() throws {
        let message = Data(#"{"method":"x.y.Z","parameters":{"name":"n","options":{"timeout":"soon"}}}"#.utf8)
        let error = #expect(throws: VarlinkError.self) {
            try VarlinkCodec.decodeCallParameters(message, as: Nested.self)
        }
        #expect(error?.parameters["parameter"] == "options")
        #expect(error?.parameters["description"] == "options.timeout: expected an integer")

        let wrongArray = Data(#"{"method":"x.y.Z","parameters":{"name":"n","options":{"timeout":1},"tags":[1]}}"#.utf8)
        let arrayError = #expect(throws: VarlinkError.self) {
            try VarlinkCodec.decodeCallParameters(wrongArray, as: Nested.self)
        }
        #expect(arrayError?.parameters["parameter"] == "tags")
        #expect(arrayError?.parameters["description"] == "tags.[0]: expected a string")
    }

    @Test(
        "a broken envelope is MalformedMessage saying what is wrong",
        arguments: [
            ("{\"method\":", "not valid JSON"),
            ("[1,2]", "must be a JSON object"),
            ("\"text\"", "must be a JSON object"),
            (#"{"parameters":{}}"#, "no \"method\""),
            (#"{"method":5}"#, "\"method\" must be a string"),
            (#"{"method":"a.b.C","more":"yes"}"#, "\"more\": expected a boolean"),
        ]
    )
    func malformedHeader(text: String, reason: String) {
        let error = #expect(throws: VarlinkError.self) {
            try VarlinkCodec.decodeCallHeader(Data(text.utf8))
        }
        #expect(error?.name == "io.offstage.Protocol.MalformedMessage")
        let actual = error?.parameters["reason"]?.stringValue ?? ""
        #expect(actual.contains(reason), "reason was: \(actual)")
    }

    @Test("replies round trip, with continues only when set")
    func replies() throws {
        let last = try VarlinkCodec.encodeReply(AddParameters(a: 1, b: 2))
        #expect(try json(last) == ["parameters": ["a": 1, "b": 2]])
        let partial = try VarlinkCodec.encodeReply(AddParameters(a: 1, b: 2), continues: true)
        #expect(try json(partial)["continues"] == true)
        #expect(
            try VarlinkCodec.decodeReply(partial, as: AddParameters.self)
                == .reply(AddParameters(a: 1, b: 2), continues: true)
        )
        #expect(
            try VarlinkCodec.decodeReply(Data("{}".utf8), as: VarlinkEmpty.self)
                == .reply(VarlinkEmpty(), continues: false))
    }

    @Test("an error reply decodes as the error, whatever type the result would have had")
    func errorReplies() throws {
        let error = VarlinkError("io.offstage.Test.Failed", parameters: ["reason": "because"])
        let message = VarlinkCodec.encodeError(error)
        #expect(try json(message) == ["error": "io.offstage.Test.Failed", "parameters": ["reason": "because"]])
        #expect(try VarlinkCodec.decodeReply(message, as: AddParameters.self) == .error(error))
        #expect(error.description == #"io.offstage.Test.Failed {"reason":"because"}"#)
        #expect(error.interface == "io.offstage.Test")
    }

    @Test("standard errors carry the fields org.varlink.service declares")
    func standardErrors() throws {
        #expect(VarlinkError.interfaceNotFound("a.b").parameters["interface"] == "a.b")
        #expect(VarlinkError.methodNotFound("a.b.C").parameters["method"] == "a.b.C")
        #expect(VarlinkError.methodNotImplemented("a.b.C").parameters["method"] == "a.b.C")
        #expect(VarlinkError.invalidParameter("x").parameters == ["parameter": "x"])
        #expect(VarlinkError.permissionDenied().name == "org.varlink.service.PermissionDenied")
        #expect(VarlinkError.expectedMore().name == "org.varlink.service.ExpectedMore")
        #expect(VarlinkError.messageTooLarge(limit: 10).parameters["limit"] == 10)
    }

    @Test("typed error parameters encode to and decode from the parameter object")
    func typedErrorParameters() throws {
        struct NotInstalled: Codable, Equatable { var appID: String }
        let error = try VarlinkError("io.offstage.Control.AppNotInstalled", encoding: NotInstalled(appID: "com.x"))
        #expect(error.parameters == ["appID": "com.x"])
        #expect(try error.decodeParameters(as: NotInstalled.self) == NotInstalled(appID: "com.x"))
        #expect(throws: EncodingError.self) { try VarlinkError("a.b.C", encoding: [1, 2]) }
    }

    @Test("escapes in keys and in the method name are decoded")
    func escapes() throws {
        let message = Data(#"{"meth\u006fd":"io.offstage.Test.\u0041dd","parameters":{"a":1,"b":2},"more":true}"#.utf8)
        let call = try VarlinkCodec.decodeCall(message)
        #expect(call.header == VarlinkCallHeader(method: "io.offstage.Test.Add", more: true))
        #expect(try call.decodeParameters(as: AddParameters.self) == AddParameters(a: 1, b: 2))
        let quoted = try VarlinkCodec.encodeCall("odd\"name\\\n", VarlinkEmpty())
        #expect(try VarlinkCodec.decodeCallHeader(quoted).method == "odd\"name\\\n")
    }

    @Test("parameters that are not an object are InvalidParameter for \"parameters\"")
    func parametersNotAnObject() throws {
        let message = Data(#"{"method":"a.b.C","parameters":5}"#.utf8)
        let error = #expect(throws: VarlinkError.self) {
            try VarlinkCodec.decodeCallParameters(message, as: AddParameters.self)
        }
        #expect(error?.parameters["parameter"] == "parameters")
        #expect(error?.parameters["description"] == "parameters: expected an object")
    }

    @Test(
        "the whole message is checked against the JSON grammar, not only the envelope fields",
        arguments: [
            #"{"method":"a.b.C",}"#,
            #"{"method":"a.b.C","parameters":{"a":01}}"#,
            #"{"method":"a.b.C","parameters":{"a":1.}}"#,
            #"{"method":"a.b.C","parameters":{"a":"\x"}}"#,
            #"{"method":"a.b.C","parameters":{"a":"\u12G4"}}"#,
            "{\"method\":\"a.b.C\",\"parameters\":{\"a\":\"tab\there\"}}",
            #"{"method":"a.b.C","parameters":[1,2,]}"#,
            #"{"method":"a.b.C","parameters":{"a":tru}}"#,
            #"{"method":"a.b.C"} {}"#,
            #"{"method":"a.b.C","parameters":{"a":[}}"#,
            #"{"method" "a.b.C"}"#,
            "",
        ]
    )
    func grammar(text: String) {
        let error = #expect(throws: VarlinkError.self) { try VarlinkCodec.decodeCallHeader(Data(text.utf8)) }
        #expect(error?.name == "io.offstage.Protocol.MalformedMessage", "for \(text)")
    }

    @Test("valid JSON of every kind inside the parameters passes the check")
    func grammarAccepts() throws {
        let values = #"[-0.5e+3,1E-2,0,true,false,null,"\"\\\/\b\f\n\r\t\u00e9",{}]"#
        let text = #" { "parameters" : {"a":\#(values),"b":{"c":[]}} , "method":"a.b.C" } "#
        #expect(try VarlinkCodec.decodeCallHeader(Data(text.utf8)).method == "a.b.C")
    }

    @Test("nesting is limited so that no message can exhaust the stack")
    func depthLimit() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let error = #expect(throws: VarlinkError.self) {
            try VarlinkCodec.decodeCallHeader(Data(#"{"method":"a.b.C","parameters":{"x":\#(deep)}}"#.utf8))
        }
        #expect(error?.parameters["reason"]?.stringValue?.contains("nested deeper") == true)
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(
            try VarlinkCodec.decodeCallHeader(Data(#"{"method":"a.b.C","parameters":{"x":\#(fine)}}"#.utf8)).method
                == "a.b.C")
    }

    @Test("a reply with an escaped error name, null parameters or no parameters decodes")
    func replyShapes() throws {
        let escaped = Data(#"{"error":"a.b.\u0046ailed","parameters":null}"#.utf8)
        #expect(try VarlinkCodec.decodeReply(escaped, as: VarlinkEmpty.self) == .error(VarlinkError("a.b.Failed")))
        let bare = Data(#"{"continues":true}"#.utf8)
        #expect(try VarlinkCodec.decodeReply(bare, as: [String: JSONValue].self) == .reply([:], continues: true))
        #expect(throws: DecodingError.self) {
            try VarlinkCodec.decodeReply(Data("{\"parameters\":".utf8), as: VarlinkEmpty.self)
        }
        #expect(throws: DecodingError.self) {
            try VarlinkCodec.decodeReply(Data(#"{"continues":1}"#.utf8), as: VarlinkEmpty.self)
        }
    }
}
