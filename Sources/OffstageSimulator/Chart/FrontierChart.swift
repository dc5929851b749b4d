import Foundation

/// Draws the oracle's frontier (SPEC §11, SCH-7): the most fresh opens for each number of device wake-ups per day as
/// a step curve, every policy as one point, and the reachable maximum as a dashed line, as a standalone SVG document
/// in the style of ``PolicyChart``.
///
/// The x axis is linear from zero (the frontier starts at zero wake-ups). Policies beyond its right end (per-app
/// timers wake the device hundreds of times a day) are drawn on the right edge with their value in the label.
public enum FrontierChart {
    /// One policy's result.
    public struct Point: Hashable, Sendable {
        /// The policy's name.
        public var name: String
        /// Its device wake-ups per day.
        public var wakeUpsPerDay: Double
        /// Its fresh share, 0 … 1.
        public var freshShare: Double

        /// Creates a point.
        public init(name: String, wakeUpsPerDay: Double, freshShare: Double) {
            self.name = name
            self.wakeUpsPerDay = wakeUpsPerDay
            self.freshShare = freshShare
        }
    }

    /// The SVG document for `frontier` with `policies`.
    public static func svg(
        _ frontier: OracleFrontier, policies: [Point], title: String, width: Int = 800, height: Int = 480
    ) -> String {
        let days = max(frontier.days, 1e-9)
        let curve = frontier.curve.map { (x: Double($0.wakeUps) / days, y: Double($0.freshOpens) / Double(max(frontier.opens, 1))) }
        let frame = ChartFrame(width: width, height: height, longestName: policies.map(\.name.count).max() ?? 0, minimumRight: 170)
        let (left, top, plotWidth, plotHeight) = (frame.left, frame.top, frame.plotWidth, frame.plotHeight)

        let frontierEnd = curve.last?.x ?? 1
        let near = policies.map(\.wakeUpsPerDay).filter { $0 <= max(3 * frontierEnd, 30) }
        let xMax = niceCeiling(max(frontierEnd, near.max() ?? 0, 1) * 1.1)
        let yMin = max(0, (min(curve.first?.y ?? 0, policies.map(\.freshShare).min() ?? 1) * 10).rounded(.down) / 10)
        func x(_ value: Double) -> Double { left + min(max(value, 0), xMax) / xMax * plotWidth }
        func y(_ share: Double) -> Double { top + (1 - (min(max(share, yMin), 1) - yMin) / (1 - yMin)) * plotHeight }
        let f = PolicyChart.format

        var svg = frame.head(title: title)

        // Grid, axes, ticks.
        let yStep = (1 - yMin) > 0.3 ? 0.1 : 0.05
        let yTicks = stride(from: yMin, through: 1.0001, by: yStep).map { $0 }
        let xStep = niceCeiling(xMax / 8)
        let xTicks = stride(from: 0.0, through: xMax + 1e-9, by: xStep).map { $0 }
        svg.append(#"<g class="grid" stroke="rgb(221,221,221)" stroke-width="1">"#)
        for share in yTicks {
            svg.append(#"<line x1="\#(f(left))" y1="\#(f(y(share)))" x2="\#(f(left + plotWidth))" y2="\#(f(y(share)))"/>"#)
        }
        for value in xTicks {
            svg.append(#"<line x1="\#(f(x(value)))" y1="\#(f(top))" x2="\#(f(x(value)))" y2="\#(f(top + plotHeight))"/>"#)
        }
        svg.append("</g>")
        svg += frame.axes()
        svg.append(#"<g class="ticks" fill="black">"#)
        for share in yTicks {
            svg.append(#"<text x="\#(f(left - 6))" y="\#(f(y(share) + 4))" text-anchor="end">\#(String(format: "%.0f", share * 100))%</text>"#)
        }
        for value in xTicks {
            svg.append(#"<text x="\#(f(x(value)))" y="\#(f(top + plotHeight + 18))" text-anchor="middle">\#(String(format: "%g", value))</text>"#)
        }
        svg.append("</g>")
        svg += frame.axisTitles(x: "Device wake-ups per day", y: "Fresh opens (of all opens)")

        // The reachable maximum.
        svg.append(
            #"<line class="reachable" x1="\#(f(left))" y1="\#(f(y(frontier.reachableShare)))" x2="\#(f(left + plotWidth))" y2="\#(f(y(frontier.reachableShare)))" stroke="black" stroke-dasharray="4 4"/>"#)
        svg.append(
            #"<text x="\#(f(left + plotWidth - 4))" y="\#(f(y(frontier.reachableShare) - 5))" text-anchor="end" font-size="10">reachable \#(String(format: "%.1f", frontier.reachableShare * 100))%</text>"#)

        // The frontier: a step at each extra wake-up, flat after the last.
        var steps: [String] = []
        for (index, point) in curve.enumerated() {
            if index > 0 { steps.append("\(f(x(point.x))),\(f(y(curve[index - 1].y)))") }
            steps.append("\(f(x(point.x))),\(f(y(point.y)))")
        }
        if let last = curve.last { steps.append("\(f(x(xMax))),\(f(y(last.y)))") }
        svg.append(#"<g class="frontier" stroke="black" fill="none">"#)
        svg.append(#"<polyline stroke-width="2" points="\#(steps.joined(separator: " "))"/>"#)
        svg.append("</g>")

        // Policies.
        for (index, policy) in policies.enumerated() {
            let color = PolicyChart.colors[index % PolicyChart.colors.count]
            let beyond = policy.wakeUpsPerDay > xMax
            let (px, py) = (x(policy.wakeUpsPerDay), y(policy.freshShare))
            svg.append(#"<g class="policy" data-policy="\#(PolicyChart.escape(policy.name))" stroke="\#(color)" fill="\#(color)">"#)
            svg.append(PolicyChart.marker(index, x: px, y: py))
            let label = beyond ? "\(policy.name) → \(String(format: "%.0f", policy.wakeUpsPerDay))/day" : policy.name
            svg.append(
                #"<text x="\#(f(px + (beyond ? -7 : 7)))" y="\#(f(py - 7))" stroke="none" font-size="10" text-anchor="\#(beyond ? "end" : "start")">\#(PolicyChart.escape(label))</text>"#)
            svg.append("</g>")
        }

        // Legend.
        let legendX = left + plotWidth + 20
        svg.append(#"<g class="legend">"#)
        svg.append(#"<line x1="\#(f(legendX))" y1="\#(f(top + 10))" x2="\#(f(legendX + 24))" y2="\#(f(top + 10))" stroke="black" stroke-width="2"/>"#)
        svg.append(#"<text x="\#(f(legendX + 32))" y="\#(f(top + 14))">oracle frontier</text>"#)
        for (index, policy) in policies.enumerated() {
            let color = PolicyChart.colors[index % PolicyChart.colors.count]
            let rowY = top + 32 + Double(index) * 22
            svg.append(#"<g stroke="\#(color)" fill="\#(color)">"#)
            svg.append(PolicyChart.marker(index, x: legendX + 12, y: rowY))
            svg.append("</g>")
            svg.append(#"<text x="\#(f(legendX + 32))" y="\#(f(rowY + 4))">\#(PolicyChart.escape(policy.name))</text>"#)
        }
        svg.append("</g>")
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// The smallest of 1, 2, 5 × a power of ten at or above `value` (positive).
    static func niceCeiling(_ value: Double) -> Double {
        let power = pow(10, (log10(max(value, 1e-9))).rounded(.down))
        for multiple in [1.0, 2, 5, 10] where multiple * power >= value - 1e-12 { return multiple * power }
        return 10 * power
    }
}
