import Foundation
import OffstageProtocol

/// A notification's user info on the wire: a JSON object. The SDK takes `[String: any Sendable]`, as iOS code passes
/// `[AnyHashable: Any]`, and refuses what JSON cannot hold before anything is sent.
enum UserInfoJSON {
    /// The JSON object for `userInfo`, or an ``NotificationError/Code/invalidArgument`` error naming the first key
    /// (as a path: `trip.stops[2]`) whose value JSON cannot hold.
    static func object(_ userInfo: [String: any Sendable]) throws(NotificationError) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        for key in userInfo.keys.sorted() {
            object[key] = try value(userInfo[key]!, at: key)
        }
        return object
    }

    private static func value(_ value: any Sendable, at path: String) throws(NotificationError) -> JSONValue {
        switch value {
        case let value as JSONValue: return value
        case let value as Bool: return .bool(value)
        case let value as String: return .string(value)
        case let value as Substring: return .string(String(value))
        case let value as any BinaryInteger:
            guard let number = Double(exactly: value), abs(number) <= 9_007_199_254_740_992 else {
                throw unsupported(
                    path, "the integer \(value) is too large for JSON (at most 2^53)", fix: "send it as a string")
            }
            return .number(number)
        case let value as Double: return try finite(value, at: path)
        case let value as Float: return try finite(Double(value), at: path)
        case let value as [String: any Sendable]:
            var object: [String: JSONValue] = [:]
            for key in value.keys.sorted() { object[key] = try self.value(value[key]!, at: path + "." + key) }
            return .object(object)
        case let value as [any Sendable]:
            var array: [JSONValue] = []
            for (index, element) in value.enumerated() {
                array.append(try self.value(element, at: "\(path)[\(index)]"))
            }
            return .array(array)
        default:
            // An optional the app put in (`["note": note]` with `note: String?`): the casts above unwrap one that
            // holds a value; one that holds none is null.
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional, mirror.children.isEmpty { return .null }
            throw unsupported(
                path, "a \(type(of: value)) cannot be sent as JSON",
                fix: "use String, Int, Double, Bool, arrays and [String: …] dictionaries of them (a date as "
                    + "timeIntervalSince1970, data as a base64 string)")
        }
    }

    private static func finite(_ value: Double, at path: String) throws(NotificationError) -> JSONValue {
        guard value.isFinite else {
            throw unsupported(path, "\(value) is not a finite number", fix: "send a finite number")
        }
        return .number(value)
    }

    private static func unsupported(_ path: String, _ what: String, fix: String) -> NotificationError {
        let shown = path.count > 60 ? String(path.prefix(60)) + "…" : path
        return NotificationError(.invalidArgument, "userInfo[\(shown.debugDescription)]: \(what)", fix: fix)
    }

    /// The app's user info from the wire: whole numbers as `Int`, other numbers as `Double`, `null` as `nil`
    /// (left out of an object).
    static func userInfo(_ object: [String: JSONValue]?) -> [String: any Sendable] {
        var userInfo: [String: any Sendable] = [:]
        for (key, value) in object ?? [:] {
            if let converted = swiftValue(value) { userInfo[key] = converted }
        }
        return userInfo
    }

    private static func swiftValue(_ value: JSONValue) -> (any Sendable)? {
        switch value {
        case .null: nil
        case .bool(let value): value
        case .number(let value): value.rounded() == value && abs(value) <= 9_007_199_254_740_992 ? Int(value) : value
        case .string(let value): value
        case .array(let elements): elements.map { swiftValue($0) ?? (nil as (any Sendable)?) }
        case .object(let members): userInfo(members)
        }
    }
}
