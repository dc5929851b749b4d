import OffstageCore
import OffstageSimulator
import Testing

@Suite("Virtual clock")
struct VirtualClockTests {
    @Test("The clock moves only when told to, and never back")
    func movesOnlyForward() {
        var clock = VirtualClock()
        let start = clock.now
        clock.advance(by: .seconds(90))
        #expect(clock.now == start + .seconds(90))
        clock.advance(to: start)
        #expect(clock.now == start + .seconds(90), "advancing to an earlier instant leaves the clock where it is")
    }
}
