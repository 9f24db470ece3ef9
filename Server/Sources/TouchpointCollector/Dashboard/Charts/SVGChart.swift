/// Inline SVG charts: drawn on the server, no script, readable by screen readers through their
/// title and description (each page also shows the numbers in a table).
enum SVGChart {
    /// The first, middle and last of `labels` under a chart's plot, `left` to `width`.
    static func axisLabels(_ labels: [String], left: Double, width: Double, height: Double) -> HTML {
        guard let first = labels.first, let last = labels.last else { return .empty }
        let middle = labels[labels.count / 2]
        return """
            <text x="\(left)" y="\(height - 6)" class="axis">\(first)</text>\
            <text x="\(left + (width - left) / 2)" y="\(height - 6)" class="axis" text-anchor="middle">\(middle)</text>\
            <text x="\(width)" y="\(height - 6)" class="axis" text-anchor="end">\(last)</text>
            """
    }

    /// One bar: its label (shown under or beside it) and its value.
    struct Bar: Sendable {
        var label: String
        var value: Int
        /// A longer label for the bar's tooltip; the label when nil.
        var detail: String?
    }

    /// Vertical bars side by side (a time series), the bars' labels under the first, middle and last bar.
    static func columns(_ bars: [Bar], title: String, description: String, id: String) -> HTML {
        let width = 720.0
        let height = 200.0
        let top = 16.0
        let bottom = 22.0
        let left = 36.0
        let plotHeight = height - top - bottom
        let maximum = max(bars.map(\.value).max() ?? 0, 1)
        let slot = (width - left) / Double(max(bars.count, 1))
        var marks = HTML.empty
        for (index, bar) in bars.enumerated() where bar.value > 0 {
            let barHeight = max(1, plotHeight * Double(bar.value) / Double(maximum))
            let x = left + Double(index) * slot
            marks += """
                <rect class="bar" x="\(x)" y="\(top + plotHeight - barHeight)" width="\(max(slot - 1, 0.5))" \
                height="\(barHeight)"><title>\(bar.detail ?? bar.label): \(bar.value)</title></rect>
                """
        }
        let labels = axisLabels(bars.map(\.label), left: left, width: width, height: height)
        return """
            <svg class="chart" id="\(id)" viewBox="0 0 \(width) \(height)" role="img" aria-labelledby="\(id)-title \(id)-desc" \
            preserveAspectRatio="none" data-maximum="\(maximum)">
            <title id="\(id)-title">\(title)</title>
            <desc id="\(id)-desc">\(description)</desc>
            <line class="baseline" x1="\(left)" y1="\(top + plotHeight)" x2="\(width)" y2="\(top + plotHeight)"/>
            <text x="\(left - 4)" y="\(top + 4)" class="axis" text-anchor="end">\(maximum)</text>
            <text x="\(left - 4)" y="\(top + plotHeight)" class="axis" text-anchor="end">0</text>
            \(marks)\(labels)
            </svg>
            """
    }

    /// Horizontal bars, one per row, each with its label and value written beside it.
    static func rows(_ bars: [Bar], title: String, description: String, id: String) -> HTML {
        let width = 640.0
        let rowHeight = 28.0
        let labelWidth = 180.0
        let valueWidth = 56.0
        let height = rowHeight * Double(max(bars.count, 1)) + 8
        let maximum = max(bars.map(\.value).max() ?? 0, 1)
        var marks = HTML.empty
        for (index, bar) in bars.enumerated() {
            let y = 4 + Double(index) * rowHeight
            let length = (width - labelWidth - valueWidth) * Double(bar.value) / Double(maximum)
            let label = bar.label.count > 28 ? String(bar.label.prefix(27)) + "…" : bar.label
            marks += """
                <g class="row" data-label="\(bar.label)" data-value="\(bar.value)">\
                <text x="\(labelWidth - 8)" y="\(y + rowHeight / 2 + 4)" text-anchor="end">\(label)</text>\
                <rect class="bar" x="\(labelWidth)" y="\(y + 4)" width="\(max(length, bar.value > 0 ? 1 : 0))" \
                height="\(rowHeight - 8)"><title>\(bar.label): \(bar.value)</title></rect>\
                <text x="\(labelWidth + length + 6)" y="\(y + rowHeight / 2 + 4)" class="value">\(bar.value)</text></g>

                """
        }
        return """
            <svg class="chart rows" id="\(id)" viewBox="0 0 \(width) \(height)" role="img" \
            aria-labelledby="\(id)-title \(id)-desc">
            <title id="\(id)-title">\(title)</title>
            <desc id="\(id)-desc">\(description)</desc>
            \(marks)</svg>
            """
    }
}
