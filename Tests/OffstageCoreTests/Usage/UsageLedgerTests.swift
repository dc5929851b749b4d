import OffstageCore
import Testing

/// The ledger that turns usage contexts and counter readings into figures (SPEC SET-3): what a counter moved while a
/// context lasted goes to that context; time counts only while the app runs.
@Suite("The usage ledger (SPEC SET-3)")
struct UsageLedgerTests {
    let start = Instant(secondsSinceEpoch: 1_800_000_000)
    let day: Int64 = 20_833

    func context(_ at: Instant, foreground: Bool = false, running: Bool = true, metered: Bool = false, wakeUp: Bool = false) -> UsageContext {
        UsageContext(since: at, day: day, foreground: foreground, backgroundRunning: running && !foreground, metered: metered, wakeUp: wakeUp)
    }

    @Test("SET-3: the bytes and CPU a context moved go to it; the next context starts from the reading that ended it")
    func deltasGoToTheContextThatEnded() {
        var ledger = UsageLedger()
        ledger.apply(
            UsageChange(at: start, contexts: [appA: context(start, foreground: true)]),
            readings: [appA: UsageReading(received: 1_000, sent: 100, cpuMicroseconds: 5_000, memoryBytes: 10)])
        let later = start + .seconds(10)
        ledger.apply(
            UsageChange(at: later, contexts: [appA: context(later, metered: true, wakeUp: false)]),
            readings: [appA: UsageReading(received: 51_000, sent: 600, cpuMicroseconds: 9_000, memoryBytes: 30)])
        let end = later + .seconds(5)
        ledger.apply(
            UsageChange(at: end, contexts: [appA: UsageContext?.none]),
            readings: [appA: UsageReading(received: 52_000, sent: 700, cpuMicroseconds: 10_000, memoryBytes: 20)])
        let front = ledger.figures[UsageKey(app: appA, day: day, foreground: true, metered: false)]
        #expect(front == UsageFigures(received: 50_000, sent: 500, cpuMicroseconds: 4_000, seconds: 10))
        let back = ledger.figures[UsageKey(app: appA, day: day, foreground: false, metered: true)]
        #expect(back == UsageFigures(received: 1_000, sent: 100, cpuMicroseconds: 1_000, seconds: 5))
        #expect(ledger.memory[UsageDay(app: appA, day: day)] == MemoryFigures(last: 20, peak: 30))
        #expect(ledger.openApps.isEmpty)
    }

    @Test("SET-3: memory read apart from a change goes to the day of the app's open context; an app that ended is left out")
    func memoryReadApart() {
        var ledger = UsageLedger()
        ledger.apply(UsageChange(at: start, contexts: [appA: context(start, running: false)]), readings: [appA: UsageReading()])
        ledger.recordMemory(appA, bytes: 40)
        ledger.recordMemory(appA, bytes: 25)
        #expect(ledger.memory[UsageDay(app: appA, day: day)] == MemoryFigures(last: 25, peak: 40))
        ledger.recordMemory(appB, bytes: 99)
        #expect(ledger.memory[UsageDay(app: appB, day: day)] == nil, "no open context")
        #expect(ledger.openApps == [appA], "recording memory opens and closes nothing")
    }

    @Test("SET-3: a frozen context counts no time; a wake-up counts once, when it begins; unknown counters count nothing")
    func frozenWakeUpsAndUnknownCounters() {
        var ledger = UsageLedger()
        ledger.apply(UsageChange(at: start, contexts: [appA: context(start, running: false)]), readings: [appA: UsageReading()])
        let woke = start + .seconds(3_600)
        ledger.apply(UsageChange(at: woke, contexts: [appA: context(woke, wakeUp: true)]), readings: [appA: UsageReading(received: 10)])
        let key = UsageKey(app: appA, day: day, foreground: false, metered: false)
        #expect(ledger.figures[key] == UsageFigures(wakeUps: 1), "an hour frozen is no runtime; bytes from an unknown count are not counted")
        ledger.readOpen([appA], at: woke + .seconds(2), readings: [appA: UsageReading(received: 25)])
        ledger.readOpen([appA], at: woke + .seconds(3), readings: [appA: UsageReading(received: 30)])
        #expect(ledger.figures[key] == UsageFigures(received: 20, seconds: 3, wakeUps: 1), "reading an open context twice counts each part once")
    }

    @Test("SET-3: a counter that went back was made again and counts from zero; taking empties the ledger; what a failed write took comes back")
    func resetsTakeAndPutBack() {
        var ledger = UsageLedger()
        ledger.apply(UsageChange(at: start, contexts: [appA: context(start)]), readings: [appA: UsageReading(received: 900)])
        let later = start + .seconds(1)
        ledger.apply(UsageChange(at: later, contexts: [appA: context(later)]), readings: [appA: UsageReading(received: 40)])
        let key = UsageKey(app: appA, day: day, foreground: false, metered: false)
        #expect(ledger.figures[key]?.received == 40)
        let taken = ledger.take()
        #expect(taken.figures[key]?.received == 40 && ledger.figures.isEmpty && ledger.memory.isEmpty)
        ledger.apply(UsageChange(at: later, transferred: [key: TransferBytes(received: 7, sent: 3)]))
        ledger.putBack(taken)
        #expect(ledger.figures[key] == UsageFigures(received: 40, transferReceived: 7, transferSent: 3, seconds: 1))
        ledger.forget(appA)
        #expect(ledger.figures.isEmpty && ledger.openApps.isEmpty)
    }

    @Test("SET-3: an app that starts counts from where its counters stood when the count stopped, even when its first reading comes after its first bytes")
    func startsFromTheBase() {
        var ledger = UsageLedger()
        // The reading came late: the app had already received 5,000 bytes and used 2 ms of CPU.
        ledger.apply(
            UsageChange(at: start, contexts: [appA: context(start, foreground: true)]),
            readings: [appA: UsageReading(received: 5_000, sent: 0, cpuMicroseconds: 2_000)],
            bases: [appA: UsageReading(received: 0, sent: 0, cpuMicroseconds: 0)])
        let end = start + .seconds(1)
        ledger.apply(
            UsageChange(at: end, contexts: [appA: UsageContext?.none]),
            readings: [appA: UsageReading(received: 6_000, sent: 10, cpuMicroseconds: 3_000)])
        let key = UsageKey(app: appA, day: day, foreground: true, metered: false)
        #expect(ledger.figures[key] == UsageFigures(received: 6_000, sent: 10, cpuMicroseconds: 3_000, seconds: 1))
        // A base ahead of the reading (counters made again since) is not used.
        ledger.apply(
            UsageChange(at: end, contexts: [appA: context(end)]), readings: [appA: UsageReading(received: 100)],
            bases: [appA: UsageReading(received: 6_000)])
        ledger.readOpen([appA], at: end, readings: [appA: UsageReading(received: 150)])
        #expect(ledger.figures[UsageKey(app: appA, day: day, foreground: false, metered: false)]?.received == 50)
    }

    @Test("SET-3: sums saturate instead of trapping on a corrupt counter")
    func saturatingSums() {
        var figures = UsageFigures(received: .max - 1)
        figures.add(UsageFigures(received: 10, wakeUps: 1))
        #expect(figures.received == .max && figures.wakeUps == 1)
    }
}
