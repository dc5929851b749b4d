import Foundation
import OffstageProtocol
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    @Test("decodes every kind of JSON value and encodes it back")
    func roundTrip() throws {
        let text = #"{"a":null,"b":true,"c":5,"d":1.5,"e":"x\"y","f":[1,"two",false],"g":{"h":{}}}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(
            value
                == [
                    "a": nil, "b": true, "c": 5, "d": 1.5, "e": "x\"y", "f": [1, "two", false], "g": ["h": [:]],
                ]
        )
        let again = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        #expect(again == value)
    }

    @Test("integral numbers encode without a fraction")
    func integersStayIntegers() throws {
        let encoded = String(decoding: try JSONEncoder().encode(JSONValue.int(1_048_576)), as: UTF8.self)
        #expect(encoded == "1048576")
        #expect(JSONValue.number(2.5).intValue == nil)
        #expect(JSONValue.int(7).intValue == 7)
    }

    @Test("description is compact JSON with sorted keys and escapes")
    func description() {
        let value: JSONValue = ["b": [1, 2.5], "a": "line\nbreak\u{1}"]
        #expect(value.description == #"{"a":"line\nbreak\u0001","b":[1,2.5]}"#)
    }

    @Test("accessors return the payload of the matching case only")
    func accessors() {
        let value: JSONValue = ["name": "x", "ok": true]
        #expect(value["name"]?.stringValue == "x")
        #expect(value["ok"]?.boolValue == true)
        #expect(value["name"]?.boolValue == nil)
        #expect(value["missing"] == nil)
        #expect(JSONValue.array([1]).arrayValue == [1])
        #expect(JSONValue.string("s").objectValue == nil)
    }
}
