/// Reads and changes settings by name, as the CLI and the Varlink interface write them
/// (`multitasking=off`, `background-refresh=on`). One table, so names and errors are the same everywhere.
public enum SettingsEditor {
    /// A device-wide setting.
    public struct DeviceKey: Sendable {
        /// The name, as written on the command line.
        public let name: String
        /// What it means.
        public let summary: String
        let keyPath: WritableKeyPath<DeviceSettings, Bool> & Sendable
    }

    /// A per-app setting.
    public struct AppKey: Sendable {
        /// The name, as written on the command line.
        public let name: String
        /// What it means.
        public let summary: String
        let keyPath: WritableKeyPath<AppSettings, Bool> & Sendable
    }

    /// Every device-wide setting.
    public static let deviceKeys: [DeviceKey] = [
        DeviceKey(name: "multitasking", summary: "multitasking supported; off makes every app exit on suspend",
                  keyPath: \.multitaskingSupported),
        DeviceKey(name: "background-refresh", summary: "background app refresh for the whole device",
                  keyPath: \.backgroundRefresh),
        DeviceKey(name: "low-power", summary: "low power mode: no background refresh or processing", keyPath: \.lowPowerMode),
        DeviceKey(name: "data-saver", summary: "no background data on metered networks unless an app is exempt",
                  keyPath: \.dataSaver),
    ]

    /// Every per-app setting.
    public static let appKeys: [AppKey] = [
        AppKey(name: "background-refresh", summary: "background app refresh allowed", keyPath: \.backgroundRefresh),
        AppKey(name: "background-data", summary: "network use in the background on metered networks",
               keyPath: \.backgroundData),
        AppKey(name: "background-activity", summary: "anything may run in the background", keyPath: \.backgroundActivity),
        AppKey(name: "unrestricted-data", summary: "exempt from data saver", keyPath: \.unrestrictedData),
        AppKey(name: "kept-in-memory", summary: "killed for memory pressure last", keyPath: \.keptInMemory),
        AppKey(name: "notifications", summary: "notifications allowed", keyPath: \.notifications),
    ]

    /// Every device setting with its value, in table order.
    public static func values(of settings: DeviceSettings) -> [(String, Bool)] {
        deviceKeys.map { ($0.name, settings[keyPath: $0.keyPath]) }
    }

    /// Every app setting with its value, in table order.
    public static func values(of settings: AppSettings) -> [(String, Bool)] {
        appKeys.map { ($0.name, settings[keyPath: $0.keyPath]) }
    }

    /// Applies `changes` (name → `on`/`off`/`true`/`false`) to device settings; all or nothing.
    public static func apply(_ changes: [String: String], to settings: DeviceSettings) throws(CoreError) -> DeviceSettings {
        var result = settings
        for name in changes.keys.sorted() {
            guard let key = deviceKeys.first(where: { $0.name == name }) else {
                throw unknown(name, valid: deviceKeys.map(\.name), scope: "device", other: appKeys.map(\.name))
            }
            result[keyPath: key.keyPath] = try parseSwitch(changes[name]!, for: name)
        }
        return result
    }

    /// Applies `changes` to one app's settings; all or nothing.
    public static func apply(_ changes: [String: String], to settings: AppSettings) throws(CoreError) -> AppSettings {
        var result = settings
        for name in changes.keys.sorted() {
            guard let key = appKeys.first(where: { $0.name == name }) else {
                throw unknown(name, valid: appKeys.map(\.name), scope: "app", other: deviceKeys.map(\.name))
            }
            result[keyPath: key.keyPath] = try parseSwitch(changes[name]!, for: name)
        }
        return result
    }

    /// Parses `on`, `off`, `true`, `false`, `yes`, `no`, `1`, `0`.
    public static func parseSwitch(_ text: String, for name: String) throws(CoreError) -> Bool {
        switch text.lowercased() {
        case "on", "true", "yes", "1": return true
        case "off", "false", "no", "0": return false
        default:
            throw CoreError(.invalidArgument, "setting \(QuotedText.quote(name)) cannot be \(QuotedText.quote(text))", fix: "use on or off, e.g. \(name)=off")
        }
    }

    static func unknown(_ name: String, valid: [String], scope: String, other: [String]) -> CoreError {
        let hint: String
        if other.contains(name) {
            hint = scope == "device" ? "'\(name)' is a per-app setting: add --app APP_ID" : "'\(name)' is a device setting: drop --app"
        } else {
            hint = "valid \(scope) settings: \(valid.joined(separator: ", "))"
        }
        return CoreError(.invalidArgument, "unknown \(scope) setting \(QuotedText.quote(name))", fix: hint)
    }
}
