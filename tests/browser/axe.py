"""axe-core in the browser suite: inject the vendored engine, run it, say what to fix.

    from tests.browser.axe import axe_violations, report

    found = axe_violations(page)
    assert not found, report(found)

The engine lives in ``static/vendor/axe-core/`` (see its README); no product page loads it:
the tests add it to the page from the static files.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

# WCAG 2.0 and 2.1, levels A and AA, and axe's best practices (landmarks, heading order,
# one main). Which of them fail a test is decided by impact, not by tag.
TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice")


@dataclass(frozen=True)
class Violation:
    """One rule broken by one element, in the words a developer needs to fix it."""

    rule: str
    impact: str
    target: str
    help: str
    summary: str
    html: str
    help_url: str

    def __repr__(self) -> str:
        return f"{self.rule} [{self.impact}] at {self.target}: {self.help}"

    def details(self) -> str:
        return f"{self!r}\n    {self.html}\n    {self.summary}\n    {self.help_url}"


def axe_violations(
    page,
    impacts=("critical", "serious"),
    *,
    exclude: tuple[str, ...] = (),
    tags: tuple[str, ...] = TAGS,
) -> list[Violation]:
    """Run axe over the page as it is now; every element breaking a rule of ``impacts``.

    ``exclude`` names CSS selectors to leave out (say, a third-party widget); a test that
    uses it should say why.
    """
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # From the app's own static files: the Content-Security-Policy refuses an inline
        # script, which is what add_script_tag(path=...) would insert.
        page.add_script_tag(url=f"/{settings.STATIC_URL.strip('/')}/vendor/axe-core/axe.min.js")
    results = page.evaluate(
        """([exclude, tags]) => axe.run(
            exclude.length ? {include: [document], exclude: exclude.map(s => [s])} : document,
            {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]},
        )""",
        [list(exclude), list(tags)],
    )
    found = []
    for rule in results["violations"]:
        for node in rule["nodes"]:
            impact = node.get("impact") or rule.get("impact") or "unknown"
            if impact not in impacts:
                continue
            found.append(
                Violation(
                    rule=rule["id"],
                    impact=impact,
                    target=" >> ".join(_selector(t) for t in node["target"]),
                    help=rule["help"],
                    summary=" ".join((node.get("failureSummary") or "").split()),
                    html=node.get("html", "")[:200],
                    help_url=rule.get("helpUrl", ""),
                )
            )
    return found


def report(found: list[Violation], where: str = "") -> str:
    """A failure message listing each violation with the element and the fix axe suggests."""
    head = f"{len(found)} accessibility violation(s){f' on {where}' if where else ''}:"
    return "\n".join([head, *(v.details() for v in found)])


def _selector(target) -> str:
    # A target inside a shadow root or frame is a list of selectors, outermost first.
    return " > ".join(target) if isinstance(target, list) else str(target)
