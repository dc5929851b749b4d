/// How hard the machine is pressed for memory (SPEC MEM-1, SCH-11), in the levels of the platform's memory-pressure
/// source: normal, warning, critical. The daemon reads it from PSI (`/proc/pressure/memory`) or, without PSI, from the
/// share of memory still available (`/proc/meminfo`); `offstage device --memory-pressure` overrides it for testing.
public enum MemoryPressure: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    /// Enough memory.
    case normal
    /// Memory is getting short: tasks stall now and then waiting for it.
    case warning
    /// Memory is short: work stalls for it; the system ends what it can.
    case critical

    /// Order of severity: normal < warning < critical.
    var severity: Int { Self.allCases.firstIndex(of: self)! }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.severity < rhs.severity }

    /// `normal, warning or critical`: for messages that list the accepted values.
    public static var names: String { allCases.map(\.rawValue).listed }
}

/// How hot the device is (SPEC SCH-11), in the levels of the platform's `ProcessInfo.ThermalState`: nominal, fair,
/// serious, critical. The daemon reads it from the kernel's thermal zones against their trip points;
/// `offstage device --thermal` overrides it for testing.
public enum ThermalState: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    /// Within normal limits.
    case nominal
    /// Slightly elevated: fans may run.
    case fair
    /// High: the kernel throttles (a passive trip point is reached).
    case serious
    /// Very high: the kernel is about to act to cool the device down (a hot or critical trip point is reached).
    case critical

    /// Order of severity: nominal < fair < serious < critical.
    var severity: Int { Self.allCases.firstIndex(of: self)! }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.severity < rhs.severity }

    /// `nominal, fair, serious or critical`: for messages that list the accepted values.
    public static var names: String { allCases.map(\.rawValue).listed }
}

extension Array where Element == String {
    /// `a, b or c`.
    fileprivate var listed: String {
        guard count > 1 else { return first ?? "" }
        return dropLast().joined(separator: ", ") + " or " + last!
    }
}
