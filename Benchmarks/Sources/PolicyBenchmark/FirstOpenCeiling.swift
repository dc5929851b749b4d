import Foundation
import OffstageCore
import OffstageSimulator

/// How often, at best, a wake-up for the app locked on can serve an open on a synthetic user: the highest chance that
/// an unlock opens a given app first, over every app and every 10 minutes of the day, measured on a long trace of the
/// same user (same habits: they depend on the seed alone).
///
/// The generator draws each screen session's first app with its time of day and nothing else (not the app of the
/// previous session), so no policy knows more about the next unlock's first app than the time it comes at. A
/// wake-up serves an open only if the next unlock opens the app it refreshed first; its chance of that is at most
/// this ceiling, and the frontier spends at most one wake-up per open it makes fresh. So no policy that does not know
/// the future gets below 1 / ceiling times the frontier's wake-ups at its own fresh share.
struct FirstOpenCeiling {
    var trace: String
    /// How long the long trace is, and how wide a cell of the day.
    var days: Int
    var binMinutes: Int
    /// Unlocks in the long trace.
    var unlocks: Int
    /// The best cell: the app, the 10 minutes of the day, its first opens and the unlocks in that cell.
    var app: String
    var minuteOfDay: Int
    var firstOpens: Int
    var cellUnlocks: Int

    var ceiling: Double { cellUnlocks == 0 ? 0 : Double(firstOpens) / Double(cellUnlocks) }

    /// Measures `parameters` with `seed` over `days` days, in cells of `binMinutes`, counting only cells with at least
    /// `minimumUnlocks` unlocks (so that a cell's share is not one lucky draw).
    init(_ parameters: SyntheticTraceGenerator.Parameters, seed: UInt64, days: Int = 400, binMinutes: Int = 10, minimumUnlocks: Int = 40) {
        var long = parameters
        long.days = days
        let generated = SyntheticTraceGenerator(long).generate(seed: seed)
        trace = "synthetic-\(parameters.name)-seed\(seed)"
        self.days = days
        self.binMinutes = binMinutes
        let clock = LocalClock()
        let bins = 24 * 60 / binMinutes
        var unlocksPerBin = Array(repeating: 0, count: bins)
        var firstPerBin = Array(repeating: [String: Int](), count: bins)
        var next = generated.sessions.startIndex
        for span in generated.screenOn {
            let seconds = (span.start - clock.startOfDay(clock.day(span.start))).inSeconds
            let bin = min(bins - 1, Int(seconds / 60) / binMinutes)
            unlocksPerBin[bin] += 1
            while next < generated.sessions.endIndex, generated.sessions[next].start < span.start { next += 1 }
            if next < generated.sessions.endIndex, span.contains(generated.sessions[next].start) {
                firstPerBin[bin][generated.sessions[next].app, default: 0] += 1
            }
        }
        unlocks = unlocksPerBin.reduce(0, +)
        var best = (app: "", bin: 0, first: 0, unlocks: 0)
        for bin in 0..<bins where unlocksPerBin[bin] >= minimumUnlocks {
            for (app, count) in firstPerBin[bin]
            where Double(count) / Double(unlocksPerBin[bin]) > (best.unlocks == 0 ? 0 : Double(best.first) / Double(best.unlocks)) {
                best = (app, bin, count, unlocksPerBin[bin])
            }
        }
        app = best.app
        minuteOfDay = best.bin * binMinutes
        firstOpens = best.first
        cellUnlocks = best.unlocks
    }

    var text: String {
        String(
            format: "%@: over %d days (%d unlocks), the likeliest first app of an unlock in any %d minutes of the day is %@ at %02d:%02d, %d of %d (%.0f %%): no policy gets below %.2f× the frontier",
            trace, days, unlocks, binMinutes, app, minuteOfDay / 60, minuteOfDay % 60, firstOpens, cellUnlocks, ceiling * 100, 1 / max(ceiling, 1e-9))
    }
}
