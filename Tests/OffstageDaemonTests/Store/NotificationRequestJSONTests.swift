import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

/// The stored form of a notification request (SPEC NT-1; §11 scale): flat JSON written and read by hand, which must
/// give back exactly the request stored, whatever its text, and be JSON any reader takes.
@Suite("Notification requests as stored JSON")
struct NotificationRequestJSONTests {
    static let texts = [
        "", "plain", "quote \" and backslash \\ and slash /", "lines\nand\rreturns\tand tabs", "control \u{01}\u{1F}\u{7F}",
        "ünïcödé ✓ 日本語 🎉 \u{10FFFF}", #"{"nested": {"json": [1, "two", null]}}"#, "\\u0041 stays as written",
    ]

    static let triggers: [NotificationTrigger] = [
        .timeInterval(seconds: 60, repeats: true), .timeInterval(seconds: 0.25, repeats: false),
        .timeInterval(seconds: 1e-3, repeats: false), .timeInterval(seconds: 3_155_760_000, repeats: false),
        .calendar(DateMatch(hour: 7, minute: 0), repeats: true),
        .calendar(DateMatch(year: 2027, month: 2, day: 29, hour: 23, minute: 59, second: 59, weekday: 7, timeZone: "Asia/Kolkata"), repeats: false),
        .date(Instant(nanosecondsSinceEpoch: 1_800_000_000_123_456_789)), .date(Instant(nanosecondsSinceEpoch: -5)),
    ]

    @Test("NT-1: every trigger and every text comes back exactly as stored, and the text is JSON Foundation reads")
    func roundTrip() throws {
        for (index, trigger) in Self.triggers.enumerated() {
            for text in Self.texts {
                let content = NotificationContent(
                    title: text, subtitle: String(text.reversed()), body: "body " + text, sound: index % 2 == 0 ? text : nil,
                    badge: index % 3 == 0 ? nil : index - 4, userInfo: index % 2 == 0 ? #"{"k": "\#(index)"}"# : "{}",
                    threadIdentifier: text, categoryIdentifier: index % 2 == 0 ? "" : text)
                let request = NotificationRequest(identifier: "id \(index) \(text)", content: content, trigger: trigger)
                for late in [nil, true, false] {
                    let json = NotificationRequestJSON.encode(request, late: late)
                    let (back, backLate) = try NotificationRequestJSON.decode(json)
                    #expect(back == request, "\(json)")
                    #expect(backLate == late)
                    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
                    #expect(object?["identifier"] as? String == request.identifier, "\(json)")
                    #expect(object?["title"] as? String == (text.isEmpty ? nil : text), "\(json)")
                }
            }
        }
    }

    @Test("NT-1: the reader takes what other writers write: whitespace, escapes of every kind, numbers in every form")
    func readsAnyWriter() throws {
        let json = #"""
             { "identifier" : "a\/b\u00e9\ud83c\udf89" , "title":"\"\\\b\f\n\r\t","badge" : -3,
              "trigger":"timeInterval", "seconds": 1.5E2 ,"repeats":true, "unknown": null, "extra": false }
            """#
        let (request, late) = try NotificationRequestJSON.decode(json)
        #expect(request.identifier == "a/bé🎉" && request.content.title == "\"\\\u{08}\u{0C}\n\r\t")
        #expect(request.content.badge == -3 && request.trigger == .timeInterval(seconds: 150, repeats: true) && late == nil)
        // A reader written by others agrees on what ours wrote, for texts of every kind.
        for text in Self.texts {
            let written = NotificationRequestJSON.encode(
                NotificationRequest(identifier: text.isEmpty ? "x" : text, content: NotificationContent(body: text), trigger: .date(.epoch)))
            let foundation = try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any]
            #expect(foundation?["body"] as? String == (text.isEmpty ? nil : text))
        }
    }

    @Test(
        "A row that is not such an object is refused, naming what is wrong",
        arguments: [
            ("", "expected '{'"), ("[]", "expected '{'"), (#"{"identifier":"a""#, "expected '}'"),
            (#"{"identifier":"a"} x"#, "text after the object"), (#"{"identifier":{"nested":1}}"#, "nested"),
            (#"{"identifier":"a","trigger":"weekly"}"#, "trigger 'weekly'"), (#"{"trigger":"date","date":1}"#, "no identifier"),
            (#"{"identifier":"a","trigger":"date"}"#, "without date"), (#"{"identifier":"a","trigger":"date","date":1.5}"#, "date is not an integer"),
            (#"{"identifier":"a\q"}"#, "unknown escape"), (#"{"identifier":"\ud800"}"#, "lone surrogate"),
            (#"{"identifier":"a"#, "unterminated"), (#"{"identifier":tru}"#, "malformed literal"), (#"{"badge":1.2.3}"#, "malformed number"),
            ("{\"identifier\":\"a\u{01}\"}", "control character"), (#"{"identifier":"a","badge":99999999999999999999}"#, "badge"),
        ])
    func refused(json: String, reason: String) {
        do {
            _ = try NotificationRequestJSON.decode(json)
            Issue.record("\(json) was read")
        } catch {
            #expect(error.reason.contains(reason), "\(json): \(error.reason)")
        }
    }
}
