import Foundation

/// Parses a push payload: a JSON object with an `aps` dictionary.
enum PayloadParser {
    /// The typed `aps` of `payload`, or the refusal naming what is wrong with it.
    static func parse(_ payload: Data) -> Result<APS, APNsRefusal> {
        do {
            return .success(try JSONDecoder().decode(Envelope.self, from: payload).aps)
        } catch let error as DecodingError {
            return .failure(APNsRefusal(.payloadEmpty, describe(error)))
        } catch {
            return .failure(APNsRefusal(.payloadEmpty, "The payload is not JSON (\(error)); send a JSON object with an aps dictionary."))
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty ? "the payload" : codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context) where context.codingPath.isEmpty && key.stringValue == "aps":
            return "The payload has no aps dictionary; add \"aps\": {…} with the alert, badge, sound or content-available."
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath)) has no \(key.stringValue); add it."
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty {
                return "The payload is not a JSON object; send {\"aps\": {…}, …}."
            }
            return "\(path(context.codingPath)) is not \(expected(type)); \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)) is null; it must be \(expected(type))."
        case .dataCorrupted(let context):
            return "The payload is not valid JSON (\(context.debugDescription)); send a UTF-8 JSON object with an aps dictionary."
        @unknown default:
            return "The payload cannot be read (\(error)); send a JSON object with an aps dictionary."
        }
    }

    private static func expected(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type: "an integer"
        case is Double.Type: "a number"
        case is [String].Type: "an array of strings"
        default: "a \(type)"
        }
    }

    private struct Envelope: Decodable {
        let aps: APS

        enum CodingKeys: String, CodingKey { case aps }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            aps = try container.decode(Wire.Dictionary.self, forKey: .aps).value
        }
    }

    /// Decodable shapes of the `aps` values (kept apart from the public types, which carry no decoding).
    private enum Wire {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ string: String) { stringValue = string }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        struct Dictionary: Decodable {
            let value: APS

            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: Key.self)
                value = APS(
                    alert: try c.decodeIfPresent(Alert.self, forKey: Key("alert"))?.value,
                    badge: try c.decodeIfPresent(Int.self, forKey: Key("badge")),
                    sound: try c.decodeIfPresent(Sound.self, forKey: Key("sound"))?.value,
                    threadID: try c.decodeIfPresent(String.self, forKey: Key("thread-id")),
                    category: try c.decodeIfPresent(String.self, forKey: Key("category")),
                    contentAvailable: try c.decodeIfPresent(Int.self, forKey: Key("content-available")) == 1,
                    mutableContent: try c.decodeIfPresent(Int.self, forKey: Key("mutable-content")) == 1
                )
            }
        }

        struct Alert: Decodable {
            let value: APSAlert

            init(from decoder: any Decoder) throws {
                if let text = try? decoder.singleValueContainer().decode(String.self) {
                    value = APSAlert(body: text)
                    return
                }
                let c = try decoder.container(keyedBy: Key.self)
                value = APSAlert(
                    title: try c.decodeIfPresent(String.self, forKey: Key("title")),
                    subtitle: try c.decodeIfPresent(String.self, forKey: Key("subtitle")),
                    body: try c.decodeIfPresent(String.self, forKey: Key("body")),
                    launchImage: try c.decodeIfPresent(String.self, forKey: Key("launch-image")),
                    titleLocKey: try c.decodeIfPresent(String.self, forKey: Key("title-loc-key")),
                    titleLocArgs: try c.decodeIfPresent([String].self, forKey: Key("title-loc-args")),
                    subtitleLocKey: try c.decodeIfPresent(String.self, forKey: Key("subtitle-loc-key")),
                    subtitleLocArgs: try c.decodeIfPresent([String].self, forKey: Key("subtitle-loc-args")),
                    locKey: try c.decodeIfPresent(String.self, forKey: Key("loc-key")),
                    locArgs: try c.decodeIfPresent([String].self, forKey: Key("loc-args"))
                )
            }
        }

        struct Sound: Decodable {
            let value: APSSound

            init(from decoder: any Decoder) throws {
                if let name = try? decoder.singleValueContainer().decode(String.self) {
                    value = APSSound(name: name)
                    return
                }
                let c = try decoder.container(keyedBy: Key.self)
                value = APSSound(
                    name: try c.decode(String.self, forKey: Key("name")),
                    critical: try c.decodeIfPresent(Int.self, forKey: Key("critical")) == 1,
                    volume: try c.decodeIfPresent(Double.self, forKey: Key("volume"))
                )
            }
        }
    }
}
