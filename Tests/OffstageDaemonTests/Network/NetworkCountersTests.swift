@testable import OffstageDaemon
import Testing

/// Reading the named counters nftables lists as JSON (SPEC SET-3): one document per `list` command, however they
/// are separated, with braces inside strings ignored.
@Suite("nftables counters as JSON")
struct NetworkCountersTests {
    @Test("SET-3: the bytes of every counter listed, from several documents one after the other")
    func parsesDocuments() {
        let output = """
            {"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5 {x}", "json_schema_version": 1}}, \
            {"counter": {"family": "inet", "name": "app1_in", "table": "offstage_t", "handle": 1, "packets": 9, "bytes": 5008117}}]}
            {"nftables": [{"metainfo": {"version": "1.0.6"}}, {"counter": {"family": "inet", "name": "app1_out", "table": "offstage_t", "handle": 2, "packets": 3, "bytes": 4049}}]}{"nftables": [{"counter": {"name": "app2_in", "bytes": 0}}]}
            """
        #expect(NetworkCounters.parse(output) == ["app1_in": 5_008_117, "app1_out": 4_049, "app2_in": 0])
    }

    @Test("SET-3: what is not a counter listing counts nothing, and a negative count is read as zero")
    func ignoresTheRest() {
        #expect(NetworkCounters.parse("").isEmpty)
        #expect(NetworkCounters.parse("not json {").isEmpty)
        #expect(NetworkCounters.parse(#"{"nftables": [{"table": {"name": "x"}}]}"#).isEmpty)
        #expect(NetworkCounters.parse(#"{"nftables": [{"counter": {"name": "x", "bytes": -4}}]}"#) == ["x": 0])
    }

    @Test("SET-3: cgroup v2 cpu.stat and smaps_rollup are read for the app's CPU and memory")
    func resourceFiles() {
        #expect(AppResourceReader.usageMicroseconds(cpuStat: "usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n") == 1234)
        #expect(AppResourceReader.usageMicroseconds(cpuStat: "user_usec 1000\n") == nil)
        let rollup = "55c0-7ffe ---p 00000000 00:00 0 [rollup]\nRss:                9000 kB\nPss:                4242 kB\nPss_Anon:            100 kB\n"
        #expect(AppResourceReader.pssBytes(smapsRollup: rollup) == Int64(4_343_808))
        #expect(AppResourceReader.pssBytes(smapsRollup: "Pss_Anon: 1 kB\n") == nil)
    }
}
