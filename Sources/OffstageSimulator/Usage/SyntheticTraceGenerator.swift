import OffstageCore

/// Generates synthetic usage traces whose statistics follow published smartphone studies (see ``Parameters``).
///
/// The same parameters and seed always give the same trace. How a trace is made:
/// 1. Each app gets ``Parameters/habitsPerApp`` habitual times of day (drawn from the hourly profile, inside
///    waking hours); these depend only on the seed (``habits(seed:)``).
/// 2. Each day the user wakes and goes to sleep at jittered times, and has a Poisson number of screen sessions
///    (mean ``Parameters/screenSessionsPerDay``). A session is a glance with probability
///    ``Parameters/glanceShare``; otherwise it opens a first app drawn by popularity and, with probability
///    ``Parameters/habitShare``, starts near one of that app's habitual times, else at a time drawn from the hourly
///    profile. Nothing starts while the user sleeps.
/// 3. Sessions are laid out in time order; one that would start before the previous one has ended starts right
///    after it. A non-glance session turns the screen on, opens its first app after the unlock delay, then, with
///    probability ``Parameters/anotherAppProbability`` each time, other apps (never the same app twice in a row),
///    and turns the screen off after the last one. Sessions that would run past the end are dropped.
public struct SyntheticTraceGenerator: Sendable {
    /// The parameters.
    public let parameters: Parameters

    /// A generator for the given parameters (by default the median profile).
    public init(_ parameters: Parameters = .median) {
        precondition(parameters.hourlyProfile.count == 24, "the hourly profile has one weight per hour")
        precondition(parameters.appCount > 0 && parameters.days > 0, "at least one app and one day")
        self.parameters = parameters
    }

    /// The app labels, `app01` … in order of popularity.
    public var apps: [String] {
        let width = max(2, String(parameters.appCount).count)
        return (1...parameters.appCount).map { number in
            let digits = String(number)
            return "app" + String(repeating: "0", count: width - digits.count) + digits
        }
    }

    /// Each app's habitual times of day (time after midnight), as drawn for `seed`.
    public func habits(seed: UInt64) -> [String: [Duration]] {
        var random = SeededGenerator(seed: seed ^ 0x6861_6269_7473)
        let awakeHours = (0..<24).map { hour -> Double in
            let middle = Duration.seconds(hour * 3600 + 1800)
            let shifted = middle < parameters.wakeTime ? middle + .seconds(86_400) : middle
            return shifted >= parameters.wakeTime && shifted < parameters.bedTime ? parameters.hourlyProfile[hour] : 0
        }
        var result: [String: [Duration]] = [:]
        for app in apps {
            result[app] = (0..<parameters.habitsPerApp).map { _ in
                let hour = random.pick(weights: awakeHours)
                let seconds = Int64(hour * 3600) + Int64(random.index(below: 3600))
                let time = Duration.seconds(seconds)
                return time < parameters.wakeTime ? time + .seconds(86_400) : time
            }
        }
        return result
    }

    /// Generates the trace for `seed`.
    public func generate(seed: UInt64) -> UsageTrace {
        let apps = apps
        let shares = parameters.popularity.shares(count: apps.count)
        let habits = habits(seed: seed)
        var random = SeededGenerator(seed: seed)
        let traceEnd = parameters.start + .seconds(Int64(parameters.days) * 86_400)

        // Where each screen session starts, and which app it opens first (nil: a glance).
        var planned: [(time: Instant, firstApp: Int?)] = []
        for day in 0..<parameters.days {
            let midnight = parameters.start + .seconds(Int64(day) * 86_400)
            let wake = midnight + parameters.wakeTime + jitter(&random)
            let bed = midnight + parameters.bedTime + jitter(&random)
            let count = random.poisson(mean: parameters.screenSessionsPerDay)
            for _ in 0..<count {
                guard !random.chance(parameters.glanceShare) else {
                    planned.append((randomTime(midnight: midnight, wake: wake, bed: bed, &random), nil))
                    continue
                }
                let app = random.pick(weights: shares)
                var time: Instant?
                if random.chance(parameters.habitShare), let times = habits[apps[app]], !times.isEmpty {
                    let habit = times[random.index(below: times.count)]
                    let offset = random.normal(mean: 0, standardDeviation: parameters.habitSpread.inSeconds)
                    let candidate = midnight + habit + .seconds(double: offset)
                    if candidate >= wake && candidate < bed { time = candidate }
                }
                planned.append((time ?? randomTime(midnight: midnight, wake: wake, bed: bed, &random), app))
            }
        }
        planned.sort { $0.time < $1.time }

        var sessions: [AppSession] = []
        var screenOn: [Span] = []
        var earliest = parameters.start
        for (time, firstApp) in planned {
            let screenStart = max(time, earliest)
            var pending: [AppSession] = []
            let screenEnd: Instant
            if let firstApp {
                var cursor = screenStart + parameters.unlockDelay
                var app = firstApp
                while true {
                    let length = parameters.appSessionLength.draw(using: &random)
                    pending.append(AppSession(app: apps[app], start: cursor, end: cursor + length))
                    cursor = cursor + length
                    guard apps.count > 1, random.chance(parameters.anotherAppProbability) else { break }
                    var others = shares
                    others[app] = 0
                    app = random.pick(weights: others)
                    cursor = cursor + parameters.appSwitchGap
                }
                screenEnd = cursor + parameters.screenOffDelay
            } else {
                screenEnd = screenStart + parameters.glanceLength.draw(using: &random)
            }
            guard screenEnd <= traceEnd else { continue }
            screenOn.append(Span(start: screenStart, end: screenEnd))
            sessions += pending
            // A new screen session starts at least a second after the screen went off.
            earliest = screenEnd + .seconds(1)
        }
        do throws(UsageTraceError) {
            return try UsageTrace(
                name: "synthetic-\(parameters.name)-seed\(seed)", start: parameters.start, end: traceEnd, apps: apps,
                sessions: sessions.sorted { ($0.start, $0.app) < ($1.start, $1.app) }, screenOn: screenOn)
        } catch {
            preconditionFailure("the generator broke a trace invariant: \(error)")
        }
    }

    private func jitter(_ random: inout SeededGenerator) -> Duration {
        .seconds(double: random.normal(mean: 0, standardDeviation: parameters.sleepJitter.inSeconds))
    }

    /// A time in `[wake, bed)` drawn from the hourly profile (hours before waking belong to the night after).
    private func randomTime(
        midnight: Instant, wake: Instant, bed: Instant, _ random: inout SeededGenerator
    ) -> Instant {
        for _ in 0..<1000 {
            let hour = random.pick(weights: parameters.hourlyProfile)
            var time = midnight + .seconds(Int64(hour * 3600)) + .milliseconds(Int64(random.index(below: 3_600_000)))
            if time < wake { time = time + .seconds(86_400) }
            if time >= wake && time < bed { return time }
        }
        return wake + .seconds(double: random.unit() * (bed - wake).inSeconds)
    }
}
