"""Shared view code: the theme, the global setup controls, page layout helpers and figure builders.

Figure builders take plain data (``sim`` results, numbers) and return a ``plotly.graph_objects.Figure``;
they never read widgets. Pages call them and hand the figure to ``st.plotly_chart``.
"""
