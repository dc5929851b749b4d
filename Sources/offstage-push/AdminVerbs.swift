import ArgumentParser
import Foundation
import OffstagePush
import OffstagePushService

/// Runs `body` with an admin connection to the database, closed afterwards.
func withAdmin(_ options: DatabaseOptions, _ body: (PushStoreAdmin) async throws -> Void) async throws {
    let admin = try await PushStoreAdmin.open(database: try options.resolve())
    do {
        try await body(admin)
        await admin.close()
    } catch {
        await admin.close()
        throw error
    }
}

/// `offstage-push keys …`.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The provider keys app servers sign their tokens with (ES256, as APNs' .p8 keys).",
        subcommands: [KeysAdd.self, KeysList.self, KeysRemove.self])
}

/// The JSON shape of a provider key.
struct KeyOutput: Encodable {
    var id: String
    var team: String
    var topics: [String]?
    var publicKey: String

    init(_ key: ProviderKey) {
        id = key.id
        team = key.teamID
        topics = key.allowedTopics.map { $0.sorted() }
        publicKey = key.publicKeyPEM
    }

    var line: String { "\(id)  team \(team)  topics \(topics?.joined(separator: ",") ?? "any")" }
}

struct KeysAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Register (or replace) a provider key: its id, team, public key and topics.")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions
    @Option(help: ArgumentHelp("The key id (the JWT's kid), e.g. ABC123DEFG.", valueName: "KID")) var id: String
    @Option(help: ArgumentHelp("The team id (the JWT's iss).", valueName: "TEAM")) var team: String
    @Option(help: ArgumentHelp("The P-256 public key, a PEM file.", valueName: "PEMFILE")) var publicKey: String
    @Option(help: ArgumentHelp("An app the key may push to; repeat for more; none for any.", valueName: "APP"))
    var topic: [String] = []

    func run() async throws {
        try await output.run {
            guard let data = FileManager.default.contents(atPath: publicKey) else {
                throw PushStoreError("The public key file \(publicKey) cannot be read; give the path of a PEM file.")
            }
            let key = ProviderKey(
                id: id, teamID: team, publicKeyPEM: String(decoding: data, as: UTF8.self),
                allowedTopics: topic.isEmpty ? nil : Set(topic))
            try await withAdmin(database) { try await $0.addProviderKey(key) }
            output.print(KeyOutput(key), text: "Added provider key " + KeyOutput(key).line)
        }
    }
}

struct KeysList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the provider keys.")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await output.run {
            var keys: [ProviderKey] = []
            try await withAdmin(database) { keys = try await $0.providerKeys() }
            let rows = keys.map(KeyOutput.init)
            output.print(rows, text: rows.isEmpty ? "No provider keys; add one with offstage-push keys add." : rows.map(\.line).joined(separator: "\n"))
        }
    }
}

struct KeysRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a provider key (running nodes refuse its tokens once their cache of it ends).")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: ArgumentHelp("The key id.", valueName: "KID")) var id: String

    func run() async throws {
        try await output.run {
            var removed = false
            try await withAdmin(database) { removed = try await $0.removeProviderKey(id: id) }
            guard removed else { throw PushStoreError("No provider key \(id); see offstage-push keys list.") }
            output.print(["removed": id], text: "Removed provider key \(id).")
        }
    }
}

/// `offstage-push devices …`.
struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The devices that pull their pushes from the gateway, each with its own secret.",
        subcommands: [DevicesAdd.self, DevicesList.self, DevicesRemove.self])
}

struct DevicesAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Enroll a device; prints its new secret once (enrolling again replaces it).")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: ArgumentHelp("The device's name, e.g. phone-1.", valueName: "NAME")) var name: String

    func run() async throws {
        try await output.run {
            var secret = ""
            try await withAdmin(database) { secret = try await $0.enroll(device: name) }
            output.print(
                ["device": name, "secret": secret],
                text: "Enrolled device \(name). Its secret, shown only now (give it to the device's daemon):\n\(secret)")
        }
    }
}

struct DevicesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the enrolled devices: connected node, stored pushes, tokens.")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await output.run {
            var devices: [PushDeviceStatus] = []
            try await withAdmin(database) { devices = try await $0.devices() }
            output.print(devices, text: devices.isEmpty ? "No devices; enroll one with offstage-push devices add NAME." : devices.map(\.line).joined(separator: "\n"))
        }
    }
}

struct DevicesRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a device with its tokens, subscriptions and stored pushes.")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: ArgumentHelp("The device's name.", valueName: "NAME")) var name: String

    func run() async throws {
        try await output.run {
            var removed = false
            try await withAdmin(database) { removed = try await $0.removeDevice(name) }
            guard removed else { throw PushStoreError("No device \(name); see offstage-push devices list.") }
            output.print(["removed": name], text: "Removed device \(name).")
        }
    }
}

/// `offstage-push status`.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Per device: its node, stored pushes and the oldest; then the recent records (dropped, collapsed, expired).")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "How many recent records to show.") var records = 20

    func run() async throws {
        try await output.run {
            struct Result: Encodable {
                var devices: [PushDeviceStatus]
                var records: [PushRecord]
            }
            var result = Result(devices: [], records: [])
            try await withAdmin(database) { admin in
                result = Result(devices: try await admin.devices(), records: try await admin.records(limit: max(0, records)))
            }
            let recordLines = result.records.map {
                "\($0.at.formatted(.iso8601))  \($0.device)  \($0.app)  \($0.apnsID)  \($0.what): \($0.detail)"
            }
            output.print(
                result,
                text: (["devices:"] + (result.devices.isEmpty ? ["  none"] : result.devices.map { "  " + $0.line })
                    + ["recent records:"] + (recordLines.isEmpty ? ["  none"] : recordLines.map { "  " + $0 })).joined(separator: "\n"))
        }
    }
}

extension PushDeviceStatus {
    /// One line of text.
    var line: String {
        let connection = connectedNode.map { "connected to \($0)" } ?? "not connected"
        let oldest = oldestStoredAt.map { ", oldest \($0.formatted(.iso8601))" } ?? ""
        return "\(name)  \(connection)  \(storedPushes) stored\(oldest)  \(liveTokens) tokens, \(liveSubscriptions) subscriptions"
    }
}
