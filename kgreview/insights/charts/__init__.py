"""Charts as inline SVG, drawn on the server from plain numbers. No JavaScript.

Every chart is an ``<svg role="img">`` with a ``<title>``, a ``<desc>`` and an
``aria-label``, axis ticks and labels, a legend, and a ``<title>`` tooltip on each mark
(the elements with class ``mark``). Text comes from the data (relation keys, usernames,
model names), so all of it goes through ``format_html``, which escapes it.

One module per kind of chart: ``daily`` (lines and stacked bars day by day), ``rates``
(shares with intervals, confidence gates), ``calibration`` (the reliability diagram);
``svg`` holds what they share: the palette, the frame, axes, labels and legends.
"""
