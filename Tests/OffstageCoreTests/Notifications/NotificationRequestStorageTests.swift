import Foundation
import OffstageCore
import Testing

/// A request is kept packed (its texts in one allocation, its trigger in a few bytes, SPEC §11 scale): what goes in
/// comes out, equality and hashing are by value, and its JSON is what the fields' own coding gives.
@Suite("Notification requests, packed")
struct NotificationRequestStorageTests {
    /// What the request's coding was when it stored its three fields as they are.
    struct Fields: Codable, Equatable {
        var identifier: String
        var content: NotificationContent
        var trigger: NotificationTrigger
    }

    static let contents: [NotificationContent] = [
        NotificationContent(title: "Wake up"),
        NotificationContent(),
        NotificationContent(
            title: "Réunion à 9 h 🗓️", subtitle: "Salle 4",
            body: String(repeating: "Ein langer Text. ", count: 20), sound: "default", badge: 0,
            userInfo: "{\"id\":12345,\"ü\":[1,2]}", threadIdentifier: "work", categoryIdentifier: "meeting"),
        NotificationContent(body: "sound given empty", sound: "", badge: -3),
        NotificationContent(title: "big badge", badge: Int.max),
        // More text than 16-bit offsets reach: kept as given.
        NotificationContent(body: String(repeating: "x", count: 70_000)),
    ]

    static let triggers: [NotificationTrigger] = [
        .timeInterval(seconds: 60, repeats: false),
        .timeInterval(seconds: 0.25, repeats: true),
        .timeInterval(seconds: -1, repeats: false),
        .date(Instant(nanosecondsSinceEpoch: -1_234_567_891)),
        .calendar(DateMatch(hour: 7, minute: 0), repeats: true),
        .calendar(DateMatch(hour: 0, minute: 0, second: 0), repeats: false),
        .calendar(
            DateMatch(
                year: 2026, month: 11, day: 24, hour: 23, minute: 59, second: 59, weekday: 3,
                timeZone: "Europe/Berlin"),
            repeats: false),
        .calendar(DateMatch(weekday: 7, timeZone: "America/Argentina/ComodRivadavia"), repeats: true),
        // Components no byte holds (refused by validation, but a request may carry them until then): kept as given.
        .calendar(DateMatch(year: 100_000, month: -1), repeats: false),
        .calendar(DateMatch(day: 255), repeats: false),
        .calendar(DateMatch(minute: Int.min), repeats: true),
    ]

    @Test("every field reads back as given, for contents and triggers of every kind")
    func roundTrip() {
        for (index, content) in Self.contents.enumerated() {
            for trigger in Self.triggers {
                let identifier = "request-\(index)-é"
                let request = NotificationRequest(identifier: identifier, content: content, trigger: trigger)
                #expect(request.identifier == identifier)
                #expect(request.content == content)
                #expect(request.trigger == trigger)
            }
        }
    }

    @Test("setting a field changes that field only")
    func settingFields() {
        var request = NotificationRequest(
            identifier: "a", content: Self.contents[2],
            trigger: .calendar(DateMatch(hour: 7, minute: 30), repeats: true))
        let copy = request
        request.content.title = "Changed"
        #expect(request.content.title == "Changed" && request.content.body == Self.contents[2].body)
        #expect(request.identifier == "a" && request.trigger == copy.trigger)
        request.identifier = "b"
        request.trigger = .date(Instant(secondsSinceEpoch: 5))
        #expect(request.content.title == "Changed" && request.trigger == .date(Instant(secondsSinceEpoch: 5)))
        #expect(copy.identifier == "a" && copy.content == Self.contents[2], "a copy keeps what it had")
    }

    @Test("equal and hashed by value: separately made, and texts equal as strings though not in bytes")
    func equalityByValue() {
        let trigger = NotificationTrigger.calendar(DateMatch(hour: 7, timeZone: "Europe/Paris"), repeats: true)
        let first = NotificationRequest(identifier: "x", content: Self.contents[2], trigger: trigger)
        let second = NotificationRequest(identifier: "x", content: Self.contents[2], trigger: trigger)
        #expect(first == second && first.hashValue == second.hashValue)
        // "é" composed and decomposed are the same String.
        let composed = NotificationRequest(
            identifier: "caf\u{E9}", content: NotificationContent(title: "caf\u{E9}"), trigger: trigger)
        let decomposed = NotificationRequest(
            identifier: "cafe\u{301}", content: NotificationContent(title: "cafe\u{301}"), trigger: trigger)
        #expect(composed == decomposed && composed.hashValue == decomposed.hashValue)
        var other = first
        other.content.badge = 1
        #expect(other != first)
        let timer = NotificationTrigger.timeInterval(seconds: 60, repeats: false)
        #expect(NotificationRequest(identifier: "x", content: Self.contents[2], trigger: timer) != first)
        let wide = NotificationRequest(identifier: "w", content: Self.contents[5], trigger: trigger)
        #expect(wide == NotificationRequest(identifier: "w", content: Self.contents[5], trigger: trigger))
        #expect(wide != NotificationRequest(identifier: "w", content: Self.contents[0], trigger: trigger))
    }

    @Test("its JSON is the fields' own (keys sorted: unsorted, their order varies), and reads back equal")
    func coding() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for content in Self.contents.prefix(5) {
            for trigger in Self.triggers {
                let request = NotificationRequest(identifier: "id", content: content, trigger: trigger)
                let fields = Fields(identifier: "id", content: content, trigger: trigger)
                let json = try encoder.encode(request)
                #expect(json == (try encoder.encode(fields)))
                #expect(try JSONDecoder().decode(NotificationRequest.self, from: json) == request)
            }
        }
    }
}
