/// One folder of sysfs (such as `/sys/class/net/eth0`) or of a test fixture laid out the same way, read
/// attribute by attribute.
///
/// Every read answers nil when the attribute cannot be read, whatever the reason: sysfs attributes come and go
/// with the devices behind them, and some refuse to be read in certain states (`carrier` of an interface that is
/// administratively down fails with EINVAL), so "unreadable" has to mean "not known" rather than an error.
struct SysfsFolder: Sendable {
    /// The folder's path.
    let path: String

    /// File access; the real file system.
    private let syscalls = Syscalls.live

    /// The folder at `path`.
    init(_ path: String) {
        self.path = path
    }

    /// The folder `name` inside this one (following symbolic links, as sysfs class folders are links).
    func child(_ name: String) -> SysfsFolder {
        SysfsFolder(path + "/" + name)
    }

    /// The names inside the folder, sorted so readings do not depend on directory order; empty when it cannot be
    /// listed (absent, or not a folder).
    func entries() -> [String] {
        ((try? syscalls.listDirectory(path)) ?? []).sorted()
    }

    /// The attribute's text without surrounding white space; nil when it cannot be read.
    func text(_ attribute: String) -> String? {
        guard let raw = try? syscalls.readFile(path + "/" + attribute) else { return nil }
        return String(raw.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// The attribute as a decimal integer; nil when unreadable or not a number.
    func integer(_ attribute: String) -> Int? {
        text(attribute).flatMap { Int($0) }
    }

    /// Whether `name` exists in the folder (a file, a folder or a link whose target exists).
    func contains(_ name: String) -> Bool {
        syscalls.fileExists(path + "/" + name)
    }

    /// The last path component of the symbolic link `name` (for `device/driver`: the driver's name); nil when it is
    /// not a link.
    func linkTargetName(_ name: String) -> String? {
        guard let target = try? syscalls.readlink(path + "/" + name) else { return nil }
        return target.split(separator: "/").last.map(String.init)
    }

    /// The `KEY=VALUE` lines of the folder's `uevent` file (sysfs's summary of the device, with `DEVTYPE`).
    func ueventProperties() -> [String: String] {
        guard let text = text("uevent") else { return [:] }
        var properties: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return properties
    }
}
