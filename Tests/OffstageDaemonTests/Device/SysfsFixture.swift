import Foundation

@testable import OffstageDaemon

/// A temporary folder laid out like `/sys/class/power_supply` or `/sys/class/net`: one folder per supply or
/// interface, one small file per attribute (ending in a newline, as sysfs writes them).
struct SysfsFixture {
    /// The folder to hand to a reader as its root.
    let root: String

    /// Creates an empty folder.
    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-sysfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// Runs `body` with a new fixture, and deletes it afterwards whatever happens.
    static func with<Result>(_ body: (SysfsFixture) throws -> Result) throws -> Result {
        let fixture = try SysfsFixture()
        defer { fixture.remove() }
        return try body(fixture)
    }

    /// Deletes the folder and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Adds (or overwrites) an entry: its attribute files, empty sub-folders, and symbolic links (name → target,
    /// which need not exist).
    func add(
        _ name: String, attributes: [String: String], folders: [String] = [], links: [String: String] = [:]
    ) throws {
        let folder = root + "/" + name
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (attribute, value) in attributes {
            try (value + "\n").write(toFile: folder + "/" + attribute, atomically: false, encoding: .utf8)
        }
        for sub in folders {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        for (link, target) in links {
            try FileManager.default.createSymbolicLink(atPath: folder + "/" + link, withDestinationPath: target)
        }
    }

    /// Adds a power supply of `type` with its attributes.
    func supply(_ name: String, type: String, _ attributes: [String: String] = [:]) throws {
        try add(name, attributes: attributes.merging(["type": type]) { $1 })
    }

    /// Adds a network interface. `physical` gives it a `device` folder (as hardware has), `driver` names the
    /// driver behind it, `wireless` adds the `wireless` folder of Wi-Fi, and `devtype` goes into `uevent`.
    func interface(
        _ name: String, type: Int = 1, operstate: String, carrier: Int? = nil, physical: Bool,
        wireless: Bool = false, devtype: String? = nil, driver: String? = nil, folders: [String] = []
    ) throws {
        var attributes = ["type": "\(type)", "operstate": operstate, "uevent": "INTERFACE=\(name)\nIFINDEX=7"]
        if let carrier { attributes["carrier"] = "\(carrier)" }
        if let devtype { attributes["uevent"] = "DEVTYPE=\(devtype)\nINTERFACE=\(name)\nIFINDEX=7" }
        var allFolders = folders
        if physical { allFolders.append("device") }
        if wireless { allFolders.append("wireless") }
        try add(name, attributes: attributes, folders: allFolders)
        if let driver {
            try FileManager.default.createSymbolicLink(
                atPath: root + "/" + name + "/device/driver", withDestinationPath: "../../../bus/usb/drivers/\(driver)")
        }
    }

    /// Removes one entry.
    func delete(_ name: String) throws {
        try FileManager.default.removeItem(atPath: root + "/" + name)
    }
}
