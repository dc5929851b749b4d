/// One message of the kernel's device events (NETLINK_KOBJECT_UEVENT): `ACTION@DEVPATH` then `KEY=VALUE`
/// fields, each ended by a NUL byte.
///
/// Only used to decide whether to re-read sysfs, never trusted for values: the reading always comes from the
/// files, so a lost, merged or forged message cannot make the reading wrong, only late or early.
struct KernelUevent: Hashable, Sendable {
    /// `add`, `remove`, `change`...
    let action: String
    /// The device's path under `/sys`.
    let devicePath: String
    /// The `KEY=VALUE` fields (`SUBSYSTEM`, `POWER_SUPPLY_ONLINE`...).
    let properties: [String: String]

    /// The subsystem whose events are about power (batteries, adapters, USB power ports).
    static let powerSupplySubsystem = "power_supply"

    /// Parses a message; nil when it is not a kernel uevent (udev's own messages start with `libudev`).
    init?(_ message: some Collection<UInt8>) {
        let fields = message.split(separator: 0, omittingEmptySubsequences: true)
            .map { String(decoding: $0, as: UTF8.self) }
        guard let header = fields.first, let at = header.firstIndex(of: "@") else { return nil }
        action = String(header[..<at])
        devicePath = String(header[header.index(after: at)...])
        var properties: [String: String] = [:]
        for field in fields.dropFirst() {
            guard let equals = field.firstIndex(of: "=") else { continue }
            properties[String(field[..<equals])] = String(field[field.index(after: equals)...])
        }
        self.properties = properties
    }

    /// Whether the event is about a power supply.
    var isPowerSupplyEvent: Bool {
        properties["SUBSYSTEM"] == Self.powerSupplySubsystem
    }
}
