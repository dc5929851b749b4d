import OffstageCore

/// Measures what a device's background work cost under an ``EnergyModel``.
///
/// Definitions (spans are half-open, so work that starts the instant other work ends does not overlap it):
/// - A **device wake-up** is a transition from asleep (screen off, no background work running) to running
///   background work. Runs are taken in order of start and form clusters of overlapping runs. A run that starts with
///   the screen on costs no wake-up (work done with the screen on costs only CPU and radio energy). A run that starts
///   with the screen off costs one, unless it starts while its cluster has already woken the device: a run of the
///   cluster started with the screen off. Work begun while the user was on the device and still going on at the lock
///   does not make the lock's next seconds free (decisions 0011, 0045): otherwise a policy could start any refresh
///   in the last seconds before a lock and make the screen-off stretch after it free.
/// - A **radio activation** is a network run that starts while the radio is idle: not during another network run
///   and not within ``RadioPowerModel/tailDuration`` after the end of earlier network activity.
public struct EnergyMeter: Sendable {
    /// The costs.
    public let model: EnergyModel

    /// A meter for `model`.
    public init(model: EnergyModel = .lte) {
        self.model = model
    }

    /// Measures `timeline`.
    public func measure(_ timeline: DeviceTimeline) -> EnergyReport {
        let runs = timeline.runsInOrder
        let wakeUps = timeline.wakeUps.count

        let cpuTime = runs.reduce(Duration.zero) { $0 + $1.span.duration }
        let coldLaunches = runs.filter(\.isColdLaunch).count

        // The radio: merge network runs into stretches of continuous activity, then walk the stretches.
        var active: [Span] = []
        for run in runs where run.usesNetwork {
            if let last = active.last, run.span.start <= last.end {
                active[active.count - 1] = Span(start: last.start, end: max(last.end, run.span.end))
            } else {
                active.append(run.span)
            }
        }
        let radio = model.radio
        var activations = 0
        var activeTime = Duration.zero
        var tailTime = Duration.zero
        for (index, stretch) in active.enumerated() {
            if index == 0 || stretch.start >= active[index - 1].end + radio.tailDuration { activations += 1 }
            activeTime += stretch.duration
            if index + 1 < active.count {
                tailTime += min(radio.tailDuration, active[index + 1].start - stretch.end)
            } else {
                tailTime += radio.tailDuration
            }
        }

        let energy = EnergyReport.Breakdown(
            wakeUps: Double(wakeUps) * model.wakeUpEnergy,
            cpu: cpuTime.inSeconds * model.cpuPower,
            coldLaunches: Double(coldLaunches) * model.coldLaunchEnergy,
            radioPromotions: Double(activations) * radio.promotionEnergy,
            radioActive: activeTime.inSeconds * radio.activePower,
            radioTail: tailTime.inSeconds * radio.tailPower)
        return EnergyReport(
            wakeUps: wakeUps, runs: runs.count, backgroundCPUTime: cpuTime, coldLaunches: coldLaunches,
            radioActivations: activations, radioActiveTime: activeTime, radioTailTime: tailTime, energy: energy)
    }
}
