/// The dashboard's stylesheet: system fonts, readable on a phone, visible keyboard focus.
enum DashboardStylesheet {
    static let text = """
        :root { color-scheme: light dark; --accent: #2458d3; --muted: #667; --line: #ccd; --bar: #2458d3; \
        --problem: #a2231d; --ok: #176b3a; }
        @media (prefers-color-scheme: dark) { :root { --accent: #8fb0ff; --muted: #aab; --line: #445; \
        --bar: #8fb0ff; --problem: #ff9d97; --ok: #7fd7a0; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
        a { color: var(--accent); }
        a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, [tabindex]:focus-visible \
        { outline: 3px solid var(--accent); outline-offset: 2px; }
        .skip { position: absolute; left: -999px; top: 0; padding: .5rem; background: Canvas; }
        .skip:focus { left: .5rem; }
        header.top { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .75rem 1rem; \
        border-bottom: 1px solid var(--line); }
        header.top nav ul { display: flex; flex-wrap: wrap; gap: .25rem .75rem; list-style: none; margin: 0; padding: 0; }
        header.top a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
        .brand { font-weight: 700; text-decoration: none; }
        .sign-out { margin-left: auto; }
        main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
        h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
        h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
        button { font: inherit; padding: .35rem .9rem; border: 1px solid var(--accent); border-radius: .3rem; \
        background: var(--accent); color: Canvas; cursor: pointer; }
        input, select { font: inherit; padding: .3rem .4rem; border: 1px solid var(--line); border-radius: .3rem; \
        max-width: 100%; }
        .figures { display: flex; flex-wrap: wrap; gap: 1rem; }
        .figure { margin: 0; padding: .75rem 1rem; border: 1px solid var(--line); border-radius: .4rem; flex: 1 1 12rem; }
        .number { display: block; font-size: 1.8rem; font-weight: 700; }
        .chart { width: 100%; height: auto; max-height: 16rem; display: block; }
        .chart .bar { fill: var(--bar); }
        .chart .baseline { stroke: var(--line); }
        .chart text { fill: currentColor; font-size: 12px; }
        .chart.rows { max-height: none; }
        .table-wrap { overflow-x: auto; margin: .5rem 0 1rem; }
        table { border-collapse: collapse; width: 100%; }
        caption { text-align: left; color: var(--muted); padding: .25rem 0; }
        th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        td { font-variant-numeric: tabular-nums; }
        tr.pair td { color: var(--muted); }
        .filters { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: .5rem 1rem; \
        align-items: end; }
        .filters p { margin: 0; }
        .filters label, .sign-in label { display: block; font-size: .9rem; color: var(--muted); }
        .filters input, .filters select { width: 100%; }
        .filters small { display: block; font-size: .8rem; color: var(--muted); }
        .inline { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .5rem; }
        .summary, .facts { display: flex; flex-wrap: wrap; gap: .5rem 2rem; margin: 0 0 1rem; }
        .summary dt, .facts dt { font-size: .85rem; color: var(--muted); }
        .summary dd, .facts dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
        .timeline { list-style: none; padding: 0; margin: 0; border-left: 3px solid var(--line); }
        .timeline .event { padding: .25rem 0 .75rem 1rem; }
        .timeline .event p { margin: 0; }
        .timeline .type { color: var(--muted); font-size: .85rem; }
        .timeline dl { margin: .25rem 0 0; display: grid; grid-template-columns: minmax(6rem, max-content) 1fr; \
        gap: 0 1rem; font-size: .9rem; }
        .timeline dl div { display: contents; }
        .timeline dt { color: var(--muted); }
        .timeline dd { margin: 0; overflow-wrap: anywhere; }
        .none, .empty, .hint, .meta { color: var(--muted); }
        .problem { color: var(--problem); }
        .ok { color: var(--ok); }
        .answers { padding-left: 1.25rem; }
        .answers blockquote { margin: 0; }
        .answers .meta { margin: 0 0 .75rem; font-size: .85rem; }
        pre.config { overflow: auto; max-height: 28rem; padding: .75rem; border: 1px solid var(--line); \
        border-radius: .4rem; font-size: .85rem; }
        .pager a { font-weight: 600; }
        fieldset { border: 1px solid var(--line); border-radius: .4rem; margin: 0 0 .75rem; padding: .5rem .75rem; }
        legend { font-weight: 600; padding: 0 .25rem; }
        .insight fieldset.series, .insight .filter { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); \
        gap: .5rem 1rem; align-items: end; }
        .insight .filter { grid-column: 1 / -1; }
        .insight p { margin: 0; }
        .insight label { display: block; font-size: .9rem; color: var(--muted); }
        .insight input:not([type=checkbox]), .insight select { width: 100%; }
        .insight .check label { display: inline; margin-left: .35rem; }
        .insight .add { margin: 0 0 .75rem; }
        .insight .actions { margin: .75rem 0 1rem; }
        .insight small { display: block; font-size: .8rem; color: var(--muted); }
        button.secondary { background: transparent; color: var(--accent); }
        .series-0 { --series: #2458d3; } .series-1 { --series: #d9731b; } .series-2 { --series: #1f9d55; } \
        .series-3 { --series: #c0392b; } .series-4 { --series: #8e44ad; } .series-5 { --series: #16a3a3; } \
        .series-6 { --series: #b8860b; } .series-7 { --series: #d6337a; } .series-8 { --series: #5d6d7e; } \
        .series-9 { --series: #7a5c3e; }
        .chart .line { fill: none; stroke: var(--series); stroke-width: 2; vector-effect: non-scaling-stroke; }
        .chart .line.dashed { stroke-dasharray: 5 4; opacity: .75; }
        .chart .point { fill: var(--series); }
        .chart .bar[class*="series-"] { fill: var(--series); }
        .legend { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; list-style: none; padding: 0; margin: .5rem 0; }
        .legend li { display: flex; align-items: center; gap: .4rem; }
        .legend .swatch { display: inline-block; width: 1.25rem; height: .3rem; border-radius: .15rem; background: var(--series); }
        .legend .swatch.dashed { background: repeating-linear-gradient(90deg, var(--series) 0 5px, transparent 5px 9px); }
        td.previous, .previous { color: var(--muted); }
        tr.total th, tr.total td { font-weight: 600; }
        td.heat { text-align: right; }
        .heat-0 { background: rgba(36, 88, 211, .03); } .heat-1 { background: rgba(36, 88, 211, .1); } \
        .heat-2 { background: rgba(36, 88, 211, .18); } .heat-3 { background: rgba(36, 88, 211, .26); } \
        .heat-4 { background: rgba(36, 88, 211, .34); } .heat-5 { background: rgba(36, 88, 211, .42); } \
        .heat-6 { background: rgba(36, 88, 211, .52); color: #fff; } .heat-7 { background: rgba(36, 88, 211, .62); color: #fff; } \
        .heat-8 { background: rgba(36, 88, 211, .72); color: #fff; } .heat-9 { background: rgba(36, 88, 211, .84); color: #fff; } \
        .heat-10 { background: rgba(36, 88, 211, .95); color: #fff; }
        .heat-scale { display: flex; align-items: center; gap: .25rem; font-size: .85rem; color: var(--muted); margin: 0 0 .5rem; }
        .heat-scale span.heat { display: inline-block; width: 1.25rem; height: .9rem; border-radius: .15rem; }
        fieldset.step { grid-column: 1 / -1; display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); \
        gap: .5rem 1rem; align-items: end; border: 1px solid var(--line); border-radius: .4rem; margin: 0; }
        fieldset.step legend { font-size: .9rem; color: var(--muted); padding: 0 .25rem; }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(30rem, 100%), 1fr)); gap: 1rem; }
        .tile { border: 1px solid var(--line); border-radius: .4rem; padding: .5rem .75rem; overflow: auto; min-width: 0; }
        .tile h2 { margin: .25rem 0 .5rem; font-size: 1.05rem; }
        .tile .meta { font-size: .85rem; font-weight: 400; }
        .tile-actions { margin: .5rem 0 0; }
        .tile-actions button, button.danger { background: Canvas; color: var(--accent); }
        button.danger { border-color: var(--problem); color: var(--problem); }
        .save { margin-top: 1.5rem; padding-top: .5rem; border-top: 1px solid var(--line); }
        .inline label { color: var(--muted); }
        .links { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; padding: 0; }
        .path-tree, .path-tree ul { list-style: none; margin: 0; padding-left: 1.25rem; border-left: 2px solid var(--line); }
        .path-tree { padding-left: .5rem; margin: 1rem 0; }
        .path-node { margin: .35rem 0; }
        .path-label { display: inline-block; }
        .path-event { font-weight: 600; }
        .path-people { font-variant-numeric: tabular-nums; }
        .path-ended { color: var(--muted); font-size: .9rem; }
        .path-bar { display: block; width: 100%; max-width: 24rem; height: .35rem; }
        .path-bar .bar { fill: var(--bar); }
        .path-node[data-other] > .path-label { color: var(--muted); font-style: italic; }
        @media (max-width: 40rem) { main { padding: .75rem; } .sign-out { margin-left: 0; } h1 { font-size: 1.3rem; } }

        """
}
