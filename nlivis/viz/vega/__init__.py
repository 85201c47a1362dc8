"""Vega-Lite specs: plain JSON dicts built by pure functions (arrays and frames in, a dict out), which
`st.vega_lite_chart` draws.

Why not plotly: Streamlit's plotly chunk (4.7 MB) costs about 1.3 s in every new browser tab before a plotly chart
can be drawn, its Vega-Lite chunk (775 kB) about 0.15 s (bench/chart_libraries.py), so a page is only fast when no
plotly chart is on it. Why not altair: it is slow to import, and a spec is a dict any function can build.
`common` writes Streamlit's look into a spec (light or dark), turns arrays into the spec's data and gives that data
back as CSV; the other modules build the specs of the pages that moved here.
"""
