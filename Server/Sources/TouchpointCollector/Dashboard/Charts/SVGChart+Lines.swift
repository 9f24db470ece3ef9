/// Charts of several series over the same intervals: lines, or bars side by side, each series in
/// a colour of the dashboard's palette (`series-0` to `series-9` in the stylesheet) named by the
/// legend beside the chart.
extension SVGChart {
    /// One series of a chart of several.
    struct Series: Sendable {
        var name: String
        /// One value per interval (nil: none there; a line breaks).
        var values: [Double?]
        /// Its colour in the palette.
        var colour: Int
        /// Drawn dashed (the period before, in a comparison).
        var isDashed = false
    }

    /// The palette's size (the stylesheet's `series-N` classes).
    static let paletteSize = 10

    /// A line per series over `labels` (one per interval; the first, middle and last are written
    /// under the axis), with a point per value and its value in the point's tooltip.
    static func lines(_ series: [Series], labels: [String], title: String, description: String, id: String) -> HTML {
        plot(series, labels: labels, title: title, description: description, id: id, bars: false)
    }

    /// The series' bars side by side in each interval.
    static func groupedColumns(
        _ series: [Series], labels: [String], title: String, description: String, id: String
    ) -> HTML {
        plot(series, labels: labels, title: title, description: description, id: id, bars: true)
    }

    private static func plot(
        _ series: [Series], labels: [String], title: String, description: String, id: String, bars: Bool
    ) -> HTML {
        let width = 720.0
        let height = 240.0
        let top = 16.0
        let bottom = 22.0
        let left = 48.0
        let plotHeight = height - top - bottom
        let values = series.flatMap { $0.values.compactMap { $0 } }
        let maximum = max(values.max() ?? 0, 0)
        let minimum = min(values.min() ?? 0, 0)
        let span = maximum - minimum > 0 ? maximum - minimum : 1
        let slot = (width - left) / Double(max(labels.count, 1))
        func y(_ value: Double) -> Double { top + plotHeight * (maximum - value) / span }
        var marks = HTML.empty
        if bars {
            let drawn = series.filter { !$0.isDashed }
            let barWidth = max(slot / Double(max(drawn.count, 1)) - 1, 0.5)
            for (offset, line) in drawn.enumerated() {
                for (index, value) in line.values.enumerated() {
                    guard let value, value != 0 else { continue }
                    let x = left + Double(index) * slot + Double(offset) * (barWidth + 1)
                    let from = y(max(value, 0))
                    marks += """
                        <rect class="bar series-\(line.colour % paletteSize)" x="\(x)" y="\(from)" width="\(barWidth)" \
                        height="\(max(abs(y(value) - y(0)), 1))"><title>\(line.name), \(label(labels, index)): \
                        \(DashboardFormat.number(value))</title></rect>
                        """
                }
            }
        } else {
            for line in series {
                var path = ""
                var points = HTML.empty
                var drawing = false
                for (index, value) in line.values.enumerated() {
                    guard let value else {
                        drawing = false
                        continue
                    }
                    let x = left + (Double(index) + 0.5) * slot
                    let point = "\(rounded(x)) \(rounded(y(value)))"
                    path += (drawing ? " L " : (path.isEmpty ? "M " : " M ")) + point
                    drawing = true
                    points += """
                        <circle class="point series-\(line.colour % paletteSize)" cx="\(x)" cy="\(y(value))" r="2.5">\
                        <title>\(line.name), \(label(labels, index)): \(DashboardFormat.number(value))</title></circle>
                        """
                }
                let dashed: HTML = line.isDashed ? " dashed" : ""
                marks += """
                    <path class="line series-\(line.colour % paletteSize)\(dashed)" d="\(path)" data-series="\(line.name)"/>\(points)
                    """
            }
        }
        let axis = axisLabels(labels, left: left, width: width, height: height)
        return """
            <svg class="chart" id="\(id)" viewBox="0 0 \(width) \(height)" role="img" aria-labelledby="\(id)-title \(id)-desc" \
            preserveAspectRatio="none" data-maximum="\(DashboardFormat.number(maximum))">
            <title id="\(id)-title">\(title)</title>
            <desc id="\(id)-desc">\(description)</desc>
            <line class="baseline" x1="\(left)" y1="\(y(0))" x2="\(width)" y2="\(y(0))"/>
            <text x="\(left - 4)" y="\(top + 4)" class="axis" text-anchor="end">\(DashboardFormat.number(maximum))</text>
            <text x="\(left - 4)" y="\(top + plotHeight)" class="axis" text-anchor="end">\(DashboardFormat.number(minimum))</text>
            \(marks)\(axis)
            </svg>
            """
    }

    /// The legend of a chart of several series: a swatch of each one's colour and its name.
    static func legend(_ series: [Series], id: String) -> HTML {
        let entries = series.map { line -> HTML in
            let dashed: HTML = line.isDashed ? " dashed" : ""
            return """
                <li data-series="\(line.name)"><span class="swatch series-\(line.colour % paletteSize)\(dashed)" aria-hidden="true"></span>\(line.name)</li>
                """
        }
        return "<ul class=\"legend\" id=\"\(id)\" aria-label=\"Legend\">\(entries)</ul>"
    }

    private static func label(_ labels: [String], _ index: Int) -> String {
        index < labels.count ? labels[index] : ""
    }

    private static func rounded(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
