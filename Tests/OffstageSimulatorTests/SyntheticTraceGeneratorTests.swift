import OffstageCore
import OffstageSimulator
import Testing

@Suite("Synthetic traces")
struct SyntheticTraceGeneratorTests {
    @Test("The same seed gives the identical trace; another seed gives another")
    func deterministic() {
        let generator = SyntheticTraceGenerator(.median)
        let first = generator.generate(seed: 7)
        #expect(first == generator.generate(seed: 7))
        #expect(first.sessions != generator.generate(seed: 8).sessions)
        #expect(generator.habits(seed: 7) == generator.habits(seed: 7))
    }

    @Test("Every profile and seed gives a trace that keeps the invariants", arguments: [
        SyntheticTraceGenerator.Parameters.light, .median, .heavy,
    ])
    func invariants(parameters: SyntheticTraceGenerator.Parameters) throws {
        for seed in UInt64(1)...3 {
            let trace = SyntheticTraceGenerator(parameters).generate(seed: seed)
            try trace.validate()
            #expect(trace.apps.count == parameters.appCount)
            #expect(trace.duration == .seconds(Int64(parameters.days) * 86_400))
            // One app in the foreground at a time.
            for (previous, next) in zip(trace.sessions, trace.sessions.dropFirst()) {
                #expect(previous.end <= next.start)
            }
        }
    }

    @Test("A 14-day median trace matches its parameters within the stated tolerances")
    func statisticsMatchParameters() {
        let parameters = SyntheticTraceGenerator.Parameters.median
        let generator = SyntheticTraceGenerator(parameters)
        let trace = generator.generate(seed: 2026)
        let summary = TraceSummary(trace)
        #expect(summary.days == 14)
        // Screen sessions per day: Poisson(50) a day, ±10 %.
        #expect(abs(summary.screenSessionsPerDay - 50) <= 5)
        // Glances ±0.05.
        #expect(abs(summary.glanceShare - parameters.glanceShare) <= 0.05)
        // Falaki et al.: ~90 % of sessions use one app, ±0.04.
        #expect(abs(summary.singleAppShare - 0.9) <= 0.04)
        // Ferreira et al.: ~40 % of app sessions under 15 s, ±0.05; median 22.1 s ±20 %.
        #expect(abs(summary.shortSessionShare - 0.40) <= 0.05)
        #expect(abs(summary.medianSessionLength.inSeconds - 22.1) <= 22.1 * 0.2)
        // Böhmer et al.: mean 71.56 s; the tail is heavy, so ±30 %.
        #expect(abs(summary.meanSessionLength.inSeconds - 71.56) <= 71.56 * 0.3)
        // The most popular app's share of opens, ±0.05 of its exponential share.
        let topShare = Double(summary.opensByApp[0].opens) / Double(trace.sessions.count)
        #expect(summary.opensByApp[0].app == "app01")
        #expect(abs(topShare - parameters.popularity.shares(count: parameters.appCount)[0]) <= 0.05)
        // Nobody opens an app in the middle of the night (sleep 23:30–07:00 ± 30 min).
        #expect(summary.opensByHour[2...4].allSatisfy { $0 == 0 })
        // The evening is busier than the early morning.
        #expect(summary.opensByHour[20] > summary.opensByHour[7])
    }

    @Test("Opens are partly predictable: an app's opens cluster around its habitual times")
    func habitsMakeOpensPredictable() {
        let generator = SyntheticTraceGenerator(.median)
        let trace = generator.generate(seed: 11)
        let times = generator.habits(seed: 11)["app01"]!
        let otherSeedTimes = generator.habits(seed: 12)["app01"]!
        func share(near habitTimes: [Duration]) -> Double {
            let opens = trace.opens(of: "app01")
            let near = opens.filter { open in
                let ofDay = Duration.seconds((open - trace.start).inSeconds.truncatingRemainder(dividingBy: 86_400))
                return habitTimes.contains { habit in
                    let habitOfDay = Duration.seconds(habit.inSeconds.truncatingRemainder(dividingBy: 86_400))
                    let distance = abs((ofDay - habitOfDay).inSeconds)
                    return min(distance, 86_400 - distance) <= 3600
                }
            }
            return Double(near.count) / Double(opens.count)
        }
        #expect(share(near: times) >= 0.35)
        #expect(share(near: times) > share(near: otherSeedTimes) + 0.15)
    }

    @Test("The named profiles are ordered from light to heavy")
    func profilesOrdered() {
        let summaries = [SyntheticTraceGenerator.Parameters.light, .median, .heavy].map {
            TraceSummary(SyntheticTraceGenerator($0).generate(seed: 3))
        }
        #expect(summaries[0].opensPerDay < summaries[1].opensPerDay)
        #expect(summaries[1].opensPerDay < summaries[2].opensPerDay)
        #expect(summaries[0].screenOnHoursPerDay < summaries[2].screenOnHoursPerDay)
    }

    @Test("Popularity shares are normalised and decreasing")
    func popularity() {
        for popularity in [SyntheticTraceGenerator.Popularity.exponential(rate: 0.35), .zipf(exponent: 1)] {
            let shares = popularity.shares(count: 10)
            #expect(abs(shares.reduce(0, +) - 1) < 1e-12)
            #expect(zip(shares, shares.dropFirst()).allSatisfy { $0 > $1 })
        }
        let zipf = SyntheticTraceGenerator.Popularity.zipf(exponent: 1).shares(count: 2)
        #expect(abs(zipf[0] - 2.0 / 3) < 1e-12)
    }
}

@Suite("Seeded random numbers")
struct SeededGeneratorTests {
    @Test("The sequence is fixed by the seed (xoshiro256** seeded by SplitMix64)")
    func fixedSequence() {
        var first = SeededGenerator(seed: 42)
        var second = SeededGenerator(seed: 42)
        let a = (0..<5).map { _ in first.next() }
        let b = (0..<5).map { _ in second.next() }
        #expect(a == b)
        var other = SeededGenerator(seed: 43)
        #expect(a != (0..<5).map { _ in other.next() })
        // Pinned values, computed with an independent implementation of SplitMix64 (whose first output for seed
        // 0, 0xE220A8397B1DCDAF, seeds the first state word) and xoshiro256**: a change of algorithm would
        // silently change every synthetic trace.
        var pinned = SeededGenerator(seed: 0)
        #expect(pinned.next() == 11_091_344_671_253_066_420)
        #expect(pinned.next() == 13_793_997_310_169_335_082)
    }

    @Test("Draws stay in range and have the expected means")
    func draws() {
        var random = SeededGenerator(seed: 1)
        let units = (0..<20_000).map { _ in random.unit() }
        #expect(units.allSatisfy { $0 >= 0 && $0 < 1 })
        #expect(abs(units.reduce(0, +) / 20_000 - 0.5) < 0.01)
        let indices = (0..<10_000).map { _ in random.index(below: 7) }
        #expect(indices.allSatisfy { (0..<7).contains($0) })
        let poisson = (0..<2_000).map { _ in Double(random.poisson(mean: 50)) }
        #expect(abs(poisson.reduce(0, +) / 2_000 - 50) < 1)
        let normals = (0..<20_000).map { _ in random.standardNormal() }
        #expect(abs(normals.reduce(0, +) / 20_000) < 0.03)
        let picks = (0..<10_000).map { _ in random.pick(weights: [1, 0, 3]) }
        #expect(!picks.contains(1))
        #expect(abs(Double(picks.filter { $0 == 2 }.count) / 10_000 - 0.75) < 0.02)
    }
}
