"""What the explorer's browser tests share: the marks, the constants, and helpers that read
the drawing (cytoscape's state), click it, and put an edge back in time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from kgreview.graph.models import Edge

MARKS = [
    pytest.mark.browser,
    # Transactional: the browser reads through the live server's own connection.
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("reference_data"),
]

VIEWPORT = {"width": 1366, "height": 820}
HOSTILE_NAME = "<img src=x onerror=alert('name ran')>"
HOSTILE_TEXT = "<script>alert('text ran')</script><svg onload=alert('svg ran')>"
INJECTED = "main img, main svg, main iframe, main script:not(#explorer-config)"
QUOTE = "Before learning vector search you should understand embeddings."


def back_in_time(edge: Edge, days: float) -> Edge:
    """The edge as if recorded and valid ``days`` ago."""
    when = timezone.now() - timedelta(days=days)
    Edge.objects.filter(pk=edge.pk).update(recorded_at=when, valid_at=when)
    return Edge.objects.get(pk=edge.pk)


def drawn(page, centre_id: int, state: str = "ready") -> None:
    """Wait until the drawing around ``centre_id`` is finished."""
    page.wait_for_function(
        "([id, state]) => { const r = document.getElementById('explorer');"
        " return r.dataset.centre === String(id) && r.dataset.state === state; }",
        arg=[centre_id, state],
    )


def drawing(page) -> dict:
    """What cytoscape holds: node names, edge ids, the centre, and each edge's look."""
    return page.evaluate(
        """() => {
        const cy = window.kgExplorer.cy;
        return {
          nodes: cy.nodes().map(n => n.data('name')).sort(),
          edges: cy.edges().map(e => e.data('eid')).sort((a, b) => a - b),
          centre: cy.nodes('.centre').map(n => n.data('name')),
          look: Object.fromEntries(cy.edges().map(e => [e.data('eid'), {
            colour: e.style('line-color'), arrow: e.style('target-arrow-shape'),
            label: e.style('label')}])),
        };
    }"""
    )


def click_node(page, name: str) -> None:
    box = page.locator("#ex-canvas").bounding_box()
    pos = page.evaluate(
        "name => window.kgExplorer.cy.nodes().filter(n => n.data('name') === name)"
        "[0].renderedPosition()",
        name,
    )
    page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])


def click_edge(page, edge_id: int) -> None:
    box = page.locator("#ex-canvas").bounding_box()
    pos = page.evaluate("id => window.kgExplorer.cy.$id('e' + id).renderedMidpoint()", edge_id)
    page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r},{g},{b})"


def palette(page) -> dict[str, str]:
    return page.evaluate(
        "() => Object.fromEntries(JSON.parse(document.getElementById('explorer-config')"
        ".textContent).relations.map(r => [r.key, r.colour]))"
    )


def no_overlap(a: dict, b: dict) -> bool:
    return a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
