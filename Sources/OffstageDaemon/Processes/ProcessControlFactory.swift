/// Chooses the freezer at start-up: cgroup v2, then the cgroup v1 freezer, then signals.
public enum ProcessControlFactory {
    /// The default bound of a freeze.
    public static let defaultFreezeTimeout: Duration = .milliseconds(100)

    /// The best freezer this machine allows. Each kind is tried by creating this instance's cgroup directory, so
    /// a kind that is mounted but not writable (not root, read-only mount) is skipped; `report` is told which kind
    /// was chosen and why each better one was not.
    ///
    /// - Parameter instanceName: Unique per daemon (a short hash of its state directory): the cgroups are named
    ///   `offstage.<instanceName>`, so two daemons never share one.
    public static func best(
        instanceName: String,
        freezeTimeout: Duration = defaultFreezeTimeout,
        report: (String) -> Void = { _ in }
    ) -> any ProcessControl {
        best(
            instanceName: instanceName, freezeTimeout: freezeTimeout, mounts: .current(syscalls: .live),
            syscalls: .live, report: report)
    }

    /// A freezer of one kind, or `ProcessControlError.unavailable` saying why it cannot be used here.
    public static func make(
        _ kind: FreezerKind,
        instanceName: String,
        freezeTimeout: Duration = defaultFreezeTimeout
    ) throws -> any ProcessControl {
        try make(
            kind, instanceName: instanceName, freezeTimeout: freezeTimeout, mounts: .current(syscalls: .live),
            syscalls: .live)
    }

    static func best(
        instanceName: String,
        freezeTimeout: Duration,
        mounts: CgroupMounts,
        syscalls: Syscalls,
        report: (String) -> Void
    ) -> any ProcessControl {
        var skipped: [String] = []
        for kind in [FreezerKind.cgroupV2, .cgroupV1] {
            do {
                let control = try make(
                    kind, instanceName: instanceName, freezeTimeout: freezeTimeout, mounts: mounts, syscalls: syscalls)
                report(choice(control, skipped: skipped))
                return control
            } catch {
                skipped.append("\(error)")
            }
        }
        let control = SignalStopFreezer(freezeTimeout: freezeTimeout, syscalls: syscalls)
        report(choice(control, skipped: skipped))
        return control
    }

    static func make(
        _ kind: FreezerKind,
        instanceName: String,
        freezeTimeout: Duration,
        mounts: CgroupMounts,
        syscalls: Syscalls
    ) throws -> any ProcessControl {
        switch kind {
        case .cgroupV2:
            guard let mount = mounts.unified else {
                throw ProcessControlError.unavailable(
                    kind: kind, reason: "no cgroup2 file system in /proc/self/mountinfo")
            }
            return try FreezerCgroupV2(
                instanceName: instanceName, mount: mount, freezeTimeout: freezeTimeout, syscalls: syscalls)
        case .cgroupV1:
            guard let mount = mounts.freezer else {
                throw ProcessControlError.unavailable(
                    kind: kind, reason: "no cgroup v1 hierarchy with the freezer controller in /proc/self/mountinfo")
            }
            return try FreezerCgroupV1(
                instanceName: instanceName, mount: mount, freezeTimeout: freezeTimeout, syscalls: syscalls)
        case .signalStop:
            _ = try CgroupName.escape(instanceName)
            return SignalStopFreezer(freezeTimeout: freezeTimeout, syscalls: syscalls)
        }
    }

    private static func choice(_ control: any ProcessControl, skipped: [String]) -> String {
        var location = ""
        if let v2 = control as? FreezerCgroupV2 { location = " at \(v2.hierarchy.instancePath)" }
        if let v1 = control as? FreezerCgroupV1 { location = " at \(v1.hierarchy.instancePath)" }
        let text = "process control: using the \(control.kind.rawValue) freezer\(location)"
        return skipped.isEmpty ? text : text + " (" + skipped.joined(separator: "; ") + ")"
    }
}
