import OffstageCore
import OffstageSimulator
import Testing

@Suite("Energy")
struct EnergyMeterTests {
    /// Round numbers so every expected value can be worked out by hand.
    let model = EnergyModel(
        wakeUpEnergy: 1, cpuPower: 2, coldLaunchCPUTime: .milliseconds(500),
        radio: RadioPowerModel(
            name: "test", promotionDuration: .seconds(1), promotionPower: 1, activePower: 3, tailDuration: .seconds(10),
            tailPower: 0.5))

    func run(_ start: Double, _ end: Double, network: Bool = true, cold: Bool = false) -> BackgroundRun {
        BackgroundRun(app: "a", span: span(start, end), usesNetwork: network, isColdLaunch: cold)
    }

    @Test("Wake-ups, CPU, cold launches and radio activations on a hand-made timeline, to the joule")
    func handMadeTimeline() {
        let timeline = DeviceTimeline(
            screenOn: [span(100, 200)],
            runs: [
                run(300, 301),  // screen off, nothing running: a wake-up; radio idle since 240: activation
                run(5, 15),  // overlaps the run at 0: same cluster, radio already active
                run(0, 10, cold: true),  // screen off, nothing running: a wake-up; first activation
                run(15, 20, network: false),  // starts the instant the cluster ends: a new wake-up
                run(20, 22),  // starts as the previous run ends: a wake-up; radio in its tail (until 25)
                run(150, 160),  // screen on: no wake-up; radio idle since 32: activation
                run(195, 230),  // screen on at its start: no wake-up; activation (tail ended at 170)
                run(225, 240, network: false),  // screen off; the run at 195 began with the screen on: a wake-up
            ])
        let report = EnergyMeter(model: model).measure(timeline)
        #expect(report.wakeUps == 5)
        #expect(report.runs == 8)
        #expect(report.backgroundCPUTime == .seconds(88))
        #expect(report.coldLaunches == 1)
        #expect(report.radioActivations == 4)
        #expect(report.radioActiveTime == .seconds(63))
        // Tails: 15→20 cut short (5 s), 22→32, 160→170, 230→240, 301→311.
        #expect(report.radioTailTime == .seconds(45))
        #expect(report.energy.wakeUps == 5)
        #expect(report.energy.cpu == 176)
        #expect(report.energy.coldLaunches == 1)
        #expect(report.energy.radioPromotions == 4)
        #expect(report.energy.radioActive == 189)
        #expect(report.energy.radioTail == 22.5)
        #expect(report.totalEnergy == 397.5)
    }

    @Test("Work done with the screen on costs no wake-up, and overlapping runs share one")
    func screenOnAndClusters() {
        let meter = EnergyMeter(model: model)
        let screenOn = meter.measure(DeviceTimeline(screenOn: [span(0, 100)], runs: [run(10, 20), run(50, 60)]))
        #expect(screenOn.wakeUps == 0)
        let cluster = meter.measure(
            DeviceTimeline(screenOn: [], runs: [run(0, 10), run(9, 30), run(29.5, 31), run(31, 32)]))
        #expect(cluster.wakeUps == 2, "a run starting the instant the cluster ends wakes the device again")
        #expect(cluster.radioActivations == 1)
    }

    @Test("SCH-7, decisions 0011 and 0045: a run started after the lock joins free only a cluster that already woke the device; work begun with the screen on and still going at the lock does not make the next seconds free")
    func screenOffJoinsOnlyAWokenCluster() {
        let meter = EnergyMeter(model: model)
        // The user locks at 100; a refresh begun at 95 runs until 105; one started at 101 is a wake-up.
        let afterLock = meter.measure(DeviceTimeline(screenOn: [span(0, 100)], runs: [run(95, 105), run(101, 110)]))
        #expect(afterLock.wakeUps == 1)
        // Once it has woken the device, a third started while the cluster goes on joins it free.
        let joined = meter.measure(
            DeviceTimeline(screenOn: [span(0, 100)], runs: [run(95, 105), run(101, 110), run(108, 112)]))
        #expect(joined.wakeUps == 1)
        // A wake-up at 200 whose cluster goes on through an unlock (210–220) and a lock: a run started at 225 joins it.
        let through = meter.measure(
            DeviceTimeline(screenOn: [span(210, 220)], runs: [run(200, 212), run(211, 230), run(225, 228)]))
        #expect(through.wakeUps == 1)
    }

    @Test("An empty timeline costs nothing")
    func emptyTimeline() {
        let report = EnergyMeter().measure(DeviceTimeline(screenOn: [], runs: []))
        #expect(report.wakeUps == 0 && report.radioActivations == 0 && report.totalEnergy == 0)
    }

    @Test("One 10 s network refresh from sleep on the default LTE model")
    func defaultLTE() {
        let report = EnergyMeter(model: .lte).measure(DeviceTimeline(screenOn: [], runs: [run(0, 10)]))
        // 0.3 J wake-up + 10 s × 1 W CPU + 0.26 s × 1.21 W promotion + 10 s × 1.2 W active + 10.12 s × 1.06 W tail.
        #expect(abs(report.totalEnergy - (0.3 + 10 + 0.3146 + 12 + 10.7272)) < 1e-9)
        let wifi = EnergyMeter(model: .wifi).measure(DeviceTimeline(screenOn: [], runs: [run(0, 10)]))
        #expect(wifi.energy.radio < report.energy.radio)
    }
}
