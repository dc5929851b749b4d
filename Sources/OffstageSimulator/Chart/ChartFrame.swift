/// The frame the charts share: the document's size, its margins and plot area, and the SVG around the plot — the
/// document head with the title, the two axes, and the axis titles — in one style.
struct ChartFrame {
    let width: Int
    let height: Int
    let left = 70.0
    /// Room for the legend on the right.
    let right: Double
    let top = 40.0
    let bottom = 60.0

    /// A frame `width` × `height` whose right margin holds a legend of names up to `longestName` characters long: its
    /// marker and about 7 px per character, at least `minimumRight`, at most 400.
    init(width: Int, height: Int, longestName: Int, minimumRight: Double) {
        self.width = width
        self.height = height
        right = Double(min(400, max(Int(minimumRight), 56 + 7 * longestName)))
    }

    var plotWidth: Double { Double(width) - left - right }
    var plotHeight: Double { Double(height) - top - bottom }

    /// The XML declaration, the opening `svg` element, a white background and the title centred over the plot.
    func head(title: String) -> [String] {
        let f = PolicyChart.format
        return [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(width)" height="\#(height)" viewBox="0 0 \#(width) \#(height)" font-family="sans-serif" font-size="12">"#,
            #"<rect x="0" y="0" width="\#(width)" height="\#(height)" fill="white"/>"#,
            #"<text x="\#(f(left + plotWidth / 2))" y="22" text-anchor="middle" font-size="15">\#(PolicyChart.escape(title))</text>"#,
        ]
    }

    /// The x and y axes along the plot's bottom and left edges.
    func axes() -> [String] {
        let f = PolicyChart.format
        return [
            #"<g class="axes" stroke="black" stroke-width="1">"#,
            #"<line x1="\#(f(left))" y1="\#(f(top + plotHeight))" x2="\#(f(left + plotWidth))" y2="\#(f(top + plotHeight))"/>"#,
            #"<line x1="\#(f(left))" y1="\#(f(top))" x2="\#(f(left))" y2="\#(f(top + plotHeight))"/>"#,
            "</g>",
        ]
    }

    /// The axes' titles: `x` under the plot, `y` turned along its left side.
    func axisTitles(x: String, y: String) -> [String] {
        let f = PolicyChart.format
        return [
            #"<text x="\#(f(left + plotWidth / 2))" y="\#(height - 14)" text-anchor="middle">\#(x)</text>"#,
            #"<text x="18" y="\#(f(top + plotHeight / 2))" text-anchor="middle" transform="rotate(-90 18 \#(f(top + plotHeight / 2)))">\#(y)</text>"#,
        ]
    }
}
