import Foundation

/// Draws the policy trade-off: device wake-ups per day (x, logarithmic) against the share of fresh opens (y), one
/// polyline with markers per policy, with axes, ticks, grid and a legend, as a standalone SVG document.
///
/// The x axis spans whole decades around the data. Values at or below the lowest decade's start (zero wake-ups
/// included) are drawn on the left edge, whose tick then reads `≤` that value.
public enum PolicyChart {
    /// Okabe and Ito's colour-blind-safe palette, cycled over the series.
    static let colors = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

    /// The SVG document for `series`.
    public static func svg(
        _ series: [PolicySeries], title: String = "Background refresh: freshness against wake-ups",
        width: Int = 800, height: Int = 480
    ) -> String {
        let frame = ChartFrame(width: width, height: height, longestName: series.map(\.name.count).max() ?? 0, minimumRight: 150)
        let (left, top, plotWidth, plotHeight) = (frame.left, frame.top, frame.plotWidth, frame.plotHeight)

        let positive = series.flatMap(\.points).map(\.wakeUpsPerDay).filter { $0 > 0 }
        let lowDecade = Int((log10(positive.min() ?? 1)).rounded(.down))
        var highDecade = Int((log10(positive.max() ?? 10)).rounded(.up))
        if highDecade <= lowDecade { highDecade = lowDecade + 1 }
        let clampsAtLeft = series.flatMap(\.points).contains { $0.wakeUpsPerDay <= pow(10, Double(lowDecade)) }
        func x(_ value: Double) -> Double {
            let exponent = value > 0 ? max(log10(value), Double(lowDecade)) : Double(lowDecade)
            return left + (exponent - Double(lowDecade)) / Double(highDecade - lowDecade) * plotWidth
        }
        func y(_ share: Double) -> Double { top + (1 - min(max(share, 0), 1)) * plotHeight }

        var svg = frame.head(title: title)

        // Grid and ticks.
        svg.append(#"<g class="grid" stroke="rgb(221,221,221)" stroke-width="1">"#)
        for step in 0...10 {
            let share = Double(step) / 10
            svg.append(#"<line x1="\#(format(left))" y1="\#(format(y(share)))" x2="\#(format(left + plotWidth))" y2="\#(format(y(share)))"/>"#)
        }
        for decade in lowDecade...highDecade {
            for multiple in [1.0, 2, 5] where decade < highDecade || multiple == 1 {
                let value = multiple * pow(10, Double(decade))
                svg.append(#"<line x1="\#(format(x(value)))" y1="\#(format(top))" x2="\#(format(x(value)))" y2="\#(format(top + plotHeight))"/>"#)
            }
        }
        svg.append("</g>")
        svg += frame.axes()
        svg.append(#"<g class="ticks" fill="black">"#)
        for step in stride(from: 0, through: 10, by: 2) {
            let share = Double(step) / 10
            svg.append(#"<text x="\#(format(left - 6))" y="\#(format(y(share) + 4))" text-anchor="end">\#(step * 10)%</text>"#)
        }
        for decade in lowDecade...highDecade {
            let value = pow(10, Double(decade))
            let label = (decade == lowDecade && clampsAtLeft ? "≤" : "") + number(value)
            svg.append(#"<text x="\#(format(x(value)))" y="\#(format(top + plotHeight + 18))" text-anchor="middle">\#(escape(label))</text>"#)
        }
        svg.append("</g>")
        svg += frame.axisTitles(x: "Device wake-ups per day (log scale)", y: "Fresh opens")

        // Series.
        for (index, policy) in series.enumerated() {
            let color = colors[index % colors.count]
            svg.append(#"<g class="series" data-policy="\#(escape(policy.name))" stroke="\#(color)" fill="\#(color)">"#)
            let coordinates = policy.points.map { "\(format(x($0.wakeUpsPerDay))),\(format(y($0.freshShare)))" }
            svg.append(#"<polyline fill="none" stroke-width="2" points="\#(coordinates.joined(separator: " "))"/>"#)
            for point in policy.points {
                svg.append(marker(index, x: x(point.wakeUpsPerDay), y: y(point.freshShare)))
                if let label = point.label {
                    svg.append(
                        #"<text x="\#(format(x(point.wakeUpsPerDay) + 7))" y="\#(format(y(point.freshShare) - 7))" stroke="none" font-size="10">\#(escape(label))</text>"#)
                }
            }
            svg.append("</g>")
        }

        // Legend.
        let legendX = left + plotWidth + 20
        svg.append(#"<g class="legend">"#)
        for (index, policy) in series.enumerated() {
            let color = colors[index % colors.count]
            let rowY = top + 10 + Double(index) * 22
            svg.append(#"<g stroke="\#(color)" fill="\#(color)">"#)
            svg.append(#"<line x1="\#(format(legendX))" y1="\#(format(rowY))" x2="\#(format(legendX + 24))" y2="\#(format(rowY))" stroke-width="2"/>"#)
            svg.append(marker(index, x: legendX + 12, y: rowY))
            svg.append("</g>")
            svg.append(#"<text x="\#(format(legendX + 32))" y="\#(format(rowY + 4))">\#(escape(policy.name))</text>"#)
        }
        svg.append("</g>")
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// A marker whose shape tells series apart without colour: circle, square, triangle, diamond, in turn.
    static func marker(_ index: Int, x: Double, y: Double) -> String {
        switch index % 4 {
        case 0:
            return #"<circle cx="\#(format(x))" cy="\#(format(y))" r="4"/>"#
        case 1:
            return #"<rect x="\#(format(x - 4))" y="\#(format(y - 4))" width="8" height="8"/>"#
        case 2:
            return #"<polygon points="\#(format(x)),\#(format(y - 5)) \#(format(x - 5)),\#(format(y + 4)) \#(format(x + 5)),\#(format(y + 4))"/>"#
        default:
            return #"<polygon points="\#(format(x)),\#(format(y - 5)) \#(format(x - 5)),\#(format(y)) \#(format(x)),\#(format(y + 5)) \#(format(x + 5)),\#(format(y))"/>"#
        }
    }

    /// A coordinate with two decimals.
    static func format(_ value: Double) -> String { String(format: "%.2f", value) }

    /// A tick value: no trailing zeros (0.1, 1, 10, 1000).
    static func number(_ value: Double) -> String {
        value >= 1 ? String(format: "%.0f", value) : String(format: "%g", value)
    }

    /// Text made safe inside XML.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
