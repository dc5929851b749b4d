import OffstageCore

/// Measures what a device's background work cost under an ``EnergyModel``.
///
/// Definitions (spans are half-open, so work that starts the instant other work ends does not overlap it):
/// - A **device wake-up** is a transition from asleep (screen off, no background work running) to running
///   background work. Runs are taken in order of start; a run that starts while an earlier run is still going on
///   joins its cluster and costs no wake-up; a run that starts a new cluster costs one wake-up if the screen is off
///   at its start, none if the screen is on (work done with the screen on costs only CPU and radio energy).
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
        let runs = timeline.runs.sorted { ($0.span.start, $0.span.end, $0.app) < ($1.span.start, $1.span.end, $1.app) }

        var wakeUps = 0
        var busyUntil: Instant?
        for run in runs {
            if let busy = busyUntil, run.span.start < busy {
                busyUntil = max(busy, run.span.end)
                continue
            }
            if !timeline.isScreenOn(at: run.span.start) { wakeUps += 1 }
            busyUntil = run.span.end
        }

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
