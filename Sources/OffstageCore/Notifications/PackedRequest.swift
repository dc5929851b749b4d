/// What a ``NotificationRequest`` keeps: one allocation holding its identifier, its badge, its trigger in eight bytes,
/// and the content's texts (and a calendar trigger's time zone) one after the other in UTF-8 — about 75 bytes and the
/// text, where the fields themselves took 280 bytes and an allocation for every text over 15 bytes (SPEC §11: 64,000
/// requests pending). Immutable once made, so the copies of a request (its pending entry, its delivery record, the
/// actions of its firing) share it, across threads too.
///
/// A request it cannot hold so — more than 65,535 bytes of text, or a calendar component below zero or too large for
/// its bits, both only possible before validation — keeps its content and trigger as given, in
/// ``PackedRequestHeader/wide``.
///
/// Sendable because nothing changes the buffer after ``make(identifier:content:trigger:)`` filled it in.
struct PackedRequest: @unchecked Sendable {
    /// The allocation: the header, then the texts.
    final class Buffer: ManagedBuffer<PackedRequestHeader, UInt8> {}

    private let buffer: Buffer

    /// The texts, in the order they are stored.
    private enum Text: Int {
        case title, subtitle, body, sound, userInfo, thread, category, timeZone
    }

    /// The bits of ``PackedRequestHeader/flags``.
    private enum Flag {
        static let badge: UInt8 = 1 << 0
        static let sound: UInt8 = 1 << 1
        static let timeZone: UInt8 = 1 << 2
        static let repeats: UInt8 = 1 << 3
        static let kind: UInt8 = 3 << 4
        static let timeInterval: UInt8 = 0 << 4
        static let calendar: UInt8 = 1 << 4
        static let date: UInt8 = 2 << 4
    }

    /// Packs a request.
    static func make(identifier: String, content: NotificationContent, trigger: NotificationTrigger) -> PackedRequest {
        var flags: UInt8 = 0
        var bits: UInt64 = 0
        var zone: String?
        var fits = true
        switch trigger {
        case .timeInterval(let seconds, let repeats):
            flags |= Flag.timeInterval | (repeats ? Flag.repeats : 0)
            bits = seconds.bitPattern
        case .calendar(let match, let repeats):
            flags |= Flag.calendar | (repeats ? Flag.repeats : 0)
            if let packed = pack(match) { bits = packed } else { fits = false }
            zone = match.timeZone
            if zone != nil { flags |= Flag.timeZone }
        case .date(let instant):
            flags |= Flag.date
            bits = UInt64(bitPattern: instant.nanosecondsSinceEpoch)
        }
        if content.badge != nil { flags |= Flag.badge }
        if content.sound != nil { flags |= Flag.sound }
        let texts = [
            content.title, content.subtitle, content.body, content.sound ?? "", content.userInfo,
            content.threadIdentifier, content.categoryIdentifier, zone ?? "",
        ]
        var ends: (UInt64, UInt64) = (0, 0)
        var total = 0
        for (index, text) in texts.enumerated() {
            total += text.utf8.count
            guard total <= Int(UInt16.max) else {
                fits = false
                break
            }
            if index < 4 {
                ends.0 |= UInt64(total) << UInt64(16 * index)
            } else {
                ends.1 |= UInt64(total) << UInt64(16 * (index - 4))
            }
        }
        guard fits else {
            let header = PackedRequestHeader(
                identifier: identifier, wide: WideRequest(content: content, trigger: trigger), badge: 0, trigger: 0,
                ends: (0, 0), flags: 0)
            let buffer = Buffer.create(minimumCapacity: 0) { _ in header }
            return PackedRequest(buffer: unsafeDowncast(buffer, to: Buffer.self))
        }
        let header = PackedRequestHeader(
            identifier: identifier, wide: nil, badge: content.badge ?? 0, trigger: bits, ends: ends, flags: flags)
        let buffer = unsafeDowncast(Buffer.create(minimumCapacity: total) { _ in header }, to: Buffer.self)
        buffer.withUnsafeMutablePointerToElements { elements in
            var offset = 0
            for var text in texts {
                text.withUTF8 { bytes in
                    guard let base = bytes.baseAddress else { return }
                    (elements + offset).initialize(from: base, count: bytes.count)
                    offset += bytes.count
                }
            }
        }
        return PackedRequest(buffer: buffer)
    }

    // MARK: Reading

    var identifier: String { buffer.header.identifier }

    var badge: Int? {
        if let wide = buffer.header.wide { return wide.content.badge }
        return buffer.header.flags & Flag.badge != 0 ? buffer.header.badge : nil
    }

    var content: NotificationContent {
        if let wide = buffer.header.wide { return wide.content }
        let flags = buffer.header.flags
        return NotificationContent(
            title: text(.title), subtitle: text(.subtitle), body: text(.body),
            sound: flags & Flag.sound != 0 ? text(.sound) : nil,
            badge: flags & Flag.badge != 0 ? buffer.header.badge : nil,
            userInfo: text(.userInfo), threadIdentifier: text(.thread), categoryIdentifier: text(.category))
    }

    var trigger: NotificationTrigger {
        if let wide = buffer.header.wide { return wide.trigger }
        let flags = buffer.header.flags
        let repeats = flags & Flag.repeats != 0
        switch flags & Flag.kind {
        case Flag.calendar:
            var match = Self.unpack(buffer.header.trigger)
            if flags & Flag.timeZone != 0 { match.timeZone = text(.timeZone) }
            return .calendar(match, repeats: repeats)
        case Flag.date:
            return .date(Instant(nanosecondsSinceEpoch: Int64(bitPattern: buffer.header.trigger)))
        default:
            return .timeInterval(seconds: Double(bitPattern: buffer.header.trigger), repeats: repeats)
        }
    }

    /// Whether the two hold the same request: the same bytes, or else the same values (texts may differ in bytes and
    /// still be equal strings, composed and decomposed accents).
    func isEqual(to other: PackedRequest) -> Bool {
        if buffer === other.buffer { return true }
        let (mine, theirs) = (buffer.header, other.buffer.header)
        if mine.wide == nil, theirs.wide == nil, mine.flags == theirs.flags, mine.badge == theirs.badge,
            mine.trigger == theirs.trigger, mine.ends == theirs.ends, mine.identifier == theirs.identifier
        {
            let count = end(of: .timeZone)
            let same = buffer.withUnsafeMutablePointerToElements { lhs in
                other.buffer.withUnsafeMutablePointerToElements { rhs in
                    UnsafeRawBufferPointer(start: lhs, count: count).elementsEqual(
                        UnsafeRawBufferPointer(start: rhs, count: count))
                }
            }
            if same { return true }
        }
        return identifier == other.identifier && content == other.content && trigger == other.trigger
    }

    private func end(of text: Text) -> Int {
        let index = text.rawValue
        let word = index < 4 ? buffer.header.ends.0 : buffer.header.ends.1
        return Int(truncatingIfNeeded: (word >> UInt64(16 * (index % 4))) & 0xFFFF)
    }

    private func text(_ text: Text) -> String {
        let start = text == .title ? 0 : end(of: Text(rawValue: text.rawValue - 1)!)
        let count = end(of: text) - start
        guard count > 0 else { return "" }
        return buffer.withUnsafeMutablePointerToElements { elements in
            String(decoding: UnsafeBufferPointer(start: elements + start, count: count), as: UTF8.self)
        }
    }

    // MARK: Calendar components in eight bytes

    /// The year in the low 16 bits, then month, day, hour, minute, second and weekday in a byte each; all ones for a
    /// component not given. Nil if one is below zero or too large for its bits.
    private static func pack(_ match: DateMatch) -> UInt64? {
        let parts = [match.year, match.month, match.day, match.hour, match.minute, match.second, match.weekday]
        var bits: UInt64 = 0
        var shift: UInt64 = 0
        for (index, part) in parts.enumerated() {
            let width: UInt64 = index == 0 ? 16 : 8
            let none: UInt64 = (1 << width) - 1
            if let part {
                guard part >= 0, UInt64(part) < none else { return nil }
                bits |= UInt64(part) << shift
            } else {
                bits |= none << shift
            }
            shift += width
        }
        return bits
    }

    private static func unpack(_ bits: UInt64) -> DateMatch {
        func part(_ shift: UInt64, _ width: UInt64) -> Int? {
            let none: UInt64 = (1 << width) - 1
            let value = (bits >> shift) & none
            return value == none ? nil : Int(value)
        }
        return DateMatch(
            year: part(0, 16), month: part(16, 8), day: part(24, 8), hour: part(32, 8), minute: part(40, 8),
            second: part(48, 8), weekday: part(56, 8))
    }
}

/// The fixed part of a ``PackedRequest``; its texts follow it in the same allocation.
struct PackedRequestHeader {
    /// The request's identifier, as the app gave it (shared with the keys that name the request).
    var identifier: String
    /// The content and trigger as given, when the packed form cannot hold them; then nothing else is used.
    var wide: WideRequest?
    /// The badge (0 when there is none).
    var badge: Int
    /// The trigger's value: a time interval's seconds (their bits), a date's nanoseconds, or a calendar trigger's
    /// components (``PackedRequest``'s eight bytes).
    var trigger: UInt64
    /// Where each text ends, 16 bits each: title, subtitle, body, sound; user info, thread, category, time zone.
    var ends: (UInt64, UInt64)
    /// Which optional values are there, whether the trigger repeats, and its kind.
    var flags: UInt8
}

/// A request's content and trigger kept as given (see ``PackedRequest``).
final class WideRequest: Sendable {
    let content: NotificationContent
    let trigger: NotificationTrigger

    init(content: NotificationContent, trigger: NotificationTrigger) {
        self.content = content
        self.trigger = trigger
    }
}
