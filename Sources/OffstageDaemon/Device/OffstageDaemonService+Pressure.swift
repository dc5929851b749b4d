import Logging

extension OffstageDaemonService {
    /// Says at start where memory pressure and the thermal state come from; a source that cannot be read leaves its
    /// condition at the default (normal, nominal) and is logged as a warning with the fix.
    static func logPressureSources(
        _ reader: MachineConditionsReader, _ settings: MachinePressureSettings, wakeUps: [PressureWakeUp], logger: Logger
    ) {
        let seconds = settings.pollInterval.formatted
        let polling = settings.pollInterval > 0 ? "read every \(seconds) s while continued-processing work is queued or running" : "read with power and network changes only"
        guard let memoryReader = reader.memory, let thermalReader = reader.thermal else { return }
        let memory = memoryReader.reading()
        if let level = memory.level {
            logger.info("memory pressure \(level.rawValue) (\(memory.source)); \(memoryWakeUpsDetail(wakeUps, settings))")
        } else {
            logger.warning(
                "memory pressure cannot be read (\(memory.source)); taken as normal (set it with `offstage device --memory-pressure`)")
        }
        let thermal = thermalReader.reading()
        if let state = thermal.state {
            logger.info("thermal state \(state.rawValue) (\(thermal.source)); \(polling)")
        } else {
            logger.warning(
                "the thermal state cannot be read (\(thermal.source)); taken as nominal (set it with `offstage device --thermal`)")
        }
    }

    /// What wakes the daemon to read memory pressure (SPEC MEM-1): PSI triggers on the machine's pressure file, and the
    /// app memory budget's usage thresholds. Each that cannot be had is logged with why; the watcher owns the rest.
    static func pressureWakeUps(_ settings: MachinePressureSettings, memory: AppMemory, logger: Logger) -> [PressureWakeUp] {
        let machine = PressureWakeUp.machine(settings, psiPath: MemoryPressureReader.systemPSI, mounts: .current())
        if let problem = machine.problem {
            logger.info("no PSI trigger for memory pressure: \(problem)")
        }
        var wakeUps = machine.wakeUps
        if let budget = memory.budget, let cgroups = memory.cgroups {
            do {
                wakeUps.append(try cgroups.budgetWakeUp(budget))
            } catch {
                logger.warning("the app memory budget's usage is not announced by the kernel: \(error); it is read with the machine's pressure")
            }
        }
        return wakeUps
    }

    /// How memory pressure is read, for the log and `offstage status`.
    static func memoryWakeUpsDetail(_ wakeUps: [PressureWakeUp], _ settings: MachinePressureSettings) -> String {
        let interval = settings.pollInterval.formatted
        guard !wakeUps.isEmpty else {
            return settings.pollInterval > 0
                ? "the kernel cannot wake the daemon for it: read every \(interval) s while an app runs"
                : "the kernel cannot wake the daemon for it, and pollInterval is 0: read with power and network changes only"
        }
        let sources = Set(wakeUps.map(\.source))
        return "read when the kernel says it may have risen (\(sources.sorted().joined(separator: "; "))), then every \(interval) s while memory is short"
    }
}
