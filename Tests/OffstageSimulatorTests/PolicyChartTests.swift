import Foundation
import OffstageCore
import OffstageSimulator
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Collects what the chart tests look at while an SVG document is parsed.
final class SVGInspector: NSObject, XMLParserDelegate {
    var elements: [String: Int] = [:]
    var policies: [String] = []
    var texts: [String] = []
    private var text = ""

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements[elementName, default: 0] += 1
        if let policy = attributes["data-policy"] { policies.append(policy) }
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        if elementName == "text" { texts.append(text) }
        text = ""
    }
}

@Suite("Chart and table")
struct PolicyChartTests {
    let series = [
        PolicySeries(
            name: "fixed interval",
            points: [.init(wakeUpsPerDay: 96, freshShare: 0.81, label: "15 min"), .init(wakeUpsPerDay: 24, freshShare: 0.55)]),
        PolicySeries(name: "Android <standby> & co", points: [.init(wakeUpsPerDay: 12, freshShare: 0.4)]),
        PolicySeries(name: "ours", points: [.init(wakeUpsPerDay: 6, freshShare: 0.7), .init(wakeUpsPerDay: 3, freshShare: 0.6)]),
        PolicySeries(name: "oracle", points: [.init(wakeUpsPerDay: 0, freshShare: 1), .init(wakeUpsPerDay: 1.5, freshShare: 1)]),
    ]

    @Test("The chart is a standalone SVG that parses, with a polyline, markers and a legend entry per policy")
    func svgParses() throws {
        let svg = PolicyChart.svg(series)
        #expect(svg.hasPrefix("<?xml"))
        let parser = XMLParser(data: Data(svg.utf8))
        let inspector = SVGInspector()
        parser.delegate = inspector
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #expect(inspector.elements["svg"] == 1)
        #expect(inspector.elements["polyline"] == series.count)
        #expect(inspector.policies == series.map(\.name))
        for policy in series { #expect(inspector.texts.contains(policy.name), "legend names \(policy.name)") }
        #expect(inspector.texts.contains("Device wake-ups per day (log scale)"))
        #expect(inspector.texts.contains("Fresh opens"))
        #expect(inspector.texts.contains("100%") && inspector.texts.contains("0%"))
        #expect(inspector.texts.contains("≤1"), "zero wake-ups are drawn on the left edge")
        #expect(inspector.texts.contains("100"))
        #expect(inspector.texts.contains("15 min"))
    }

    @Test("An empty chart still parses")
    func emptyChart() {
        let parser = XMLParser(data: Data(PolicyChart.svg([]).utf8))
        #expect(parser.parse())
    }

    @Test("The table aligns its columns and writes ages as people read them")
    func table() {
        let rows = [
            PolicyTable.Row(
                policy: "fixed interval", knob: "15 min", wakeUpsPerDay: 96, energyJoulesPerDay: 412.25,
                freshShare: 0.8123, medianAge: .seconds(372), p90Age: .seconds(810)),
            PolicyTable.Row(
                policy: "oracle", knob: "H=1h", wakeUpsPerDay: 3.5, energyJoulesPerDay: 20, freshShare: 1,
                medianAge: .seconds(4), p90Age: .seconds(7322), missedWindows: 12),
        ]
        let expected = """
            policy          knob    wake-ups/day  energy J/day   fresh  median age  p90 age  missed
            --------------  ------  ------------  ------------  ------  ----------  -------  ------
            fixed interval  15 min          96.0         412.2   81.2%      6m 12s  13m 30s       –
            oracle          H=1h             3.5          20.0  100.0%        4.0s   2h 02m      12

            """
        #expect(PolicyTable.render(rows) == expected)
        #expect(PolicyTable.age(nil) == "–")
        #expect(PolicyTable.age(.seconds(42)) == "42s")
        #expect(PolicyTable.age(.seconds(90_000)) == "1d 01h")
    }
}
