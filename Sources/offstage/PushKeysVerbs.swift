import ArgumentParser
import Dispatch
import Foundation
import OffstageProtocol
import OffstagePush
import Synchronization

// `offstage push`, `push-keys` and `push-status` (one file each, with their shared checks in PushArguments.swift): the push
// gateway as an app server and its operator see it
// (SPEC NT-3..5, CLI-1). This file does not import OffstageCore: its `PushType` would hide the gateway's.

// MARK: Provider keys

/// `offstage push-keys …`: the provider keys app servers sign with (SPEC NT-3).
struct PushKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-keys",
        abstract: "Register, list and remove the provider keys app servers sign their pushes with.",
        discussion: """
            A provider key is a P-256 key pair with a 10-character id and a team id, as Apple's .p8 keys: the app \
            server keeps the private key and signs ES256 provider tokens (kid = the key id, iss = the team); the \
            gateway keeps the public key and checks them.
            """,
        subcommands: [PushKeysAdd.self, PushKeysList.self, PushKeysRemove.self],
        defaultSubcommand: PushKeysList.self)
}

struct PushKeysAdd: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Register a provider key: an existing public key, or a new pair whose private key is written out.",
        discussion: """
            With --generate FILE a new P-256 pair is made: the private key is written to FILE (PKCS#8 PEM, the \
            format of Apple's .p8 files, mode 0600; an existing file is never overwritten) and the public key is \
            registered. With --public-key FILE, FILE holds a public key in PEM, or a private .p8 key of which only \
            the public half is sent. --topic limits the key to these apps (repeatable); without it the key may send \
            to every app. A key with the same id is replaced.

            Prints the key id (10 random uppercase letters and digits unless --key-id gives one). --team-id \
            defaults to $OFFSTAGE_PUSH_TEAM_ID.
            """)
    @OptionGroup var globals: GlobalOptions
    @Option(
        name: .customLong("team-id"),
        help: ArgumentHelp("The team: the iss of its provider tokens [default: $OFFSTAGE_PUSH_TEAM_ID].", valueName: "TEAM"))
    var teamID: String?
    @Option(name: .customLong("key-id"), help: ArgumentHelp("The key's id (10 letters and digits).", valueName: "ID"))
    var keyID: String?
    @Option(
        name: .customLong("public-key"),
        help: ArgumentHelp("A public key (or a .p8 private key) in PEM to register.", valueName: "FILE"))
    var publicKey: String?
    @Option(help: ArgumentHelp("Make a new pair; write its private key here.", valueName: "PRIVATE_KEY_OUT"))
    var generate: String?
    @Option(
        name: .customLong("topic"),
        help: ArgumentHelp("An app the key may send to (repeatable); all apps when left out.", valueName: "APP_ID"))
    var topics: [String] = []

    mutating func validate() throws {
        let team = teamID ?? ProcessInfo.processInfo.environment["OFFSTAGE_PUSH_TEAM_ID"]
        guard let team, !team.isEmpty else {
            throw ValidationError("--team-id is missing; give --team-id TEAM or set OFFSTAGE_PUSH_TEAM_ID")
        }
        if team.contains(where: \.isWhitespace) { throw ValidationError("--team-id must not contain spaces") }
        if let keyID { try PushArguments.checkKeyID(keyID) }
        switch (publicKey, generate) {
        case (nil, nil):
            throw ValidationError(
                "give --public-key FILE to register a key you have, or --generate PRIVATE_KEY_OUT to make one")
        case (.some, .some):
            throw ValidationError("give --public-key or --generate, not both")
        case (let path?, nil):
            _ = try Self.publicKeyPEM(at: path)
        case (nil, let path?):
            try Self.checkNewFile(path)
        }
        if topics.contains("") { throw ValidationError("--topic is empty; give an app's id") }
    }

    func run(with client: ControlClient) throws {
        let team = teamID ?? ProcessInfo.processInfo.environment["OFFSTAGE_PUSH_TEAM_ID"] ?? ""
        let id = keyID ?? PushArguments.newKeyID()
        let publicPEM: String
        var written: String?
        if let generate {
            let pair = ProviderKeyPair.generate()
            try Self.writeNew(pair.privateKeyPEM, to: generate)
            (publicPEM, written) = (pair.publicKeyPEM, generate)
        } else {
            publicPEM = try Self.publicKeyPEM(at: publicKey ?? "")
        }
        let reply: PushControlInterface.AddKeyReply
        do {
            reply = try client.pushCall(
                PushControlInterface.Method.addKey,
                PushControlInterface.AddKeyParameters(
                    id: id, teamId: team, publicKey: publicPEM, topics: topics.isEmpty ? nil : topics),
                as: PushControlInterface.AddKeyReply.self)
        } catch {
            // The key was not registered: its private half is of no use.
            if let written { unlink(written) }
            throw error
        }
        struct Added: Encodable {
            var key: PushControlInterface.KeyMessage
            var privateKey: String?
        }
        if let written, !client.json {
            let note =
                "wrote the private key to \(written) (mode 0600): keep it with the app server, and send with "
                + "`offstage push APP_ID --key \(written) --key-id \(reply.key.id) --team-id \(team) --payload …`\n"
            FileHandle.standardError.write(Data(note.utf8))
        }
        try client.output(Added(key: reply.key, privateKey: written), text: reply.key.id)
    }

    /// The public key PEM in `path`: a public key as it is, the public half of a private key.
    static func publicKeyPEM(at path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("--public-key \(path.debugDescription) cannot be read; give a PEM file's path")
        }
        if text.contains("PRIVATE KEY") {
            guard let derived = try? ProviderKeyPair.publicKeyPEM(ofPrivateKeyPEM: text) else {
                throw ValidationError(
                    "--public-key \(path.debugDescription) holds a private key that is not P-256; provider keys are "
                        + "P-256 (ES256)")
            }
            return derived
        }
        guard text.contains("-----BEGIN PUBLIC KEY-----") else {
            throw ValidationError(
                "--public-key \(path.debugDescription) is not a PEM public key; give a file that begins with "
                    + "-----BEGIN PUBLIC KEY----- (or the .p8 private key)")
        }
        return text
    }

    /// Refuses a path that exists or whose folder does not.
    static func checkNewFile(_ path: String) throws {
        if FileManager.default.fileExists(atPath: path) {
            throw ValidationError(
                "--generate \(path.debugDescription) exists; it is not overwritten: give a new path, or remove the "
                    + "file first")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) || !isFolder.boolValue {
            throw ValidationError("--generate \(path.debugDescription): the folder \(folder) does not exist; create it first")
        }
    }

    /// Writes `text` to a new file readable by its owner alone; an existing file is never replaced.
    static func writeNew(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw PushFailure(
                "cannot create \(path.debugDescription) for the private key: \(reason); give a new path in a folder you "
                    + "can write")
        }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                unlink(path)
                throw PushFailure("cannot write the private key to \(path.debugDescription): \(reason)")
            }
            offset += count
        }
        guard fsync(fd) == 0 else {
            unlink(path)
            throw PushFailure("cannot write the private key to \(path.debugDescription): \(String(cString: strerror(errno)))")
        }
    }
}

struct PushKeysList: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the registered provider keys: id, team, the apps each may send to, when it was added.",
        discussion: #"With --json, the reply as it is: {"keys": [...]}."#)
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        let reply = try client.pushCall(
            PushControlInterface.Method.keys, NoParameters(), as: PushControlInterface.KeysReply.self)
        try client.output(reply, text: Table.pushKeys(reply.keys))
    }
}

struct PushKeysRemove: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a provider key: pushes signed with it are refused (403 InvalidProviderToken) from now on.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The key's id (see `offstage push-keys`).", valueName: "ID")) var id: String

    func validate() throws {
        if id.isEmpty { throw ValidationError("ID is empty; give a key id from `offstage push-keys list`") }
    }

    func run(with client: ControlClient) throws {
        _ = try client.pushCall(PushControlInterface.Method.removeKey, PushControlInterface.RemoveKeyParameters(id: id))
        try client.output(["removed": id], text: "removed key \(id)")
    }
}
