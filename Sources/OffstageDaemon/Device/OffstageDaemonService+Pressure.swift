import Logging

extension OffstageDaemonService {
    /// Says at start where memory pressure and the thermal state come from; a source that cannot be read leaves its
    /// condition at the default (normal, nominal) and is logged as a warning with the fix.
    static func logPressureSources(_ reader: MachineConditionsReader, _ settings: MachinePressureSettings, logger: Logger) {
        let seconds = settings.pollInterval.formatted
        let polling = settings.pollInterval > 0 ? "read every \(seconds) s while continued-processing work is queued or running" : "read with power and network changes only"
        guard let memoryReader = reader.memory, let thermalReader = reader.thermal else { return }
        let memory = memoryReader.reading()
        if let level = memory.level {
            logger.info("memory pressure \(level.rawValue) (\(memory.source)); \(polling)")
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
}
