/// Turns app ids and instance names into safe cgroup directory names and back.
///
/// Bundle ids such as `com.example.finite-task` stay as they are. Any other byte, `%`, a leading dot and a
/// name that could be taken for a kernel interface file (`cgroup.procs`, `memory.max`, `tasks`) are written as
/// `%XX`, so the mapping is reversible: `ProcessControl.appKey(owningPid:)` reads the key back from the
/// directory name alone, even after a daemon restart.
enum CgroupName {
    /// The most bytes a directory name may have.
    static let maximumLength = 255

    /// Prefixes of cgroup v1 and v2 interface files: a directory must never be named like one, or `mkdir` of an
    /// app group would hit `EEXIST` on a kernel file and be taken for an existing group.
    private static let interfacePrefixes: Set<String> = [
        "cgroup", "cpu", "cpuacct", "cpuset", "memory", "io", "pids", "rdma", "hugetlb", "misc", "freezer",
        "devices", "blkio", "net_cls", "net_prio", "perf_event", "irq",
    ]
    private static let interfaceNames: Set<String> = ["tasks", "notify_on_release", "release_agent"]

    /// The directory name for `name`.
    static func escape(_ name: String) throws -> String {
        guard !name.isEmpty else { throw ProcessControlError.invalidName(name, reason: "it is empty") }
        let bytes = Array(name.utf8)
        let firstComponent = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let looksLikeInterface =
            interfaceNames.contains(name) || (name.contains(".") && interfacePrefixes.contains(String(firstComponent)))
        var escaped = ""
        for (index, byte) in bytes.enumerated() {
            let plain = isPlain(byte) && !(index == 0 && (byte == UInt8(ascii: ".") || looksLikeInterface))
            if plain {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped += "%" + hex(byte)
            }
        }
        guard escaped.utf8.count <= maximumLength else {
            throw ProcessControlError.invalidName(name, reason: "it is longer than \(maximumLength) bytes once escaped")
        }
        return escaped
    }

    /// The name a directory name was made from; nil when it is not one of ours.
    static func unescape(_ directoryName: String) -> String? {
        var bytes: [UInt8] = []
        let source = Array(directoryName.utf8)
        var index = 0
        while index < source.count {
            let byte = source[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < source.count,
                    let value = UInt8(String(decoding: source[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                index += 3
            } else {
                guard isPlain(byte) else { return nil }
                bytes.append(byte)
                index += 1
            }
        }
        guard !bytes.isEmpty else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
