"""Did the graph answer a competency question as expected? The pass rules, and the gaps
a failing question points at.

- concepts: every expected concept is in the answer set (recall 1); the missing ones are
  listed, and what was found besides.
- path: a path in the answer joins the two expected ends (either way round).
- yes / no: the answer's yes equals the expected one.

A gap is a pair of concepts a missing link would join: a path's two ends; the asked
concept and each missing expected concept; a yes / no question's two concepts (only
when yes was expected: a missing link cannot turn a yes into a no).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from construction.ask.types import Answer


@dataclass(frozen=True)
class Expected:
    """A question's expectation with its names resolved to concept ids now (None: the
    name no longer means an active concept)."""

    expect: str
    names: tuple[str, ...]
    ids: tuple[int | None, ...]
    yes: bool | None = None


@dataclass(frozen=True)
class Gap:
    """Two concepts a missing link would join, by id and name."""

    ends: tuple[int, int]
    names: tuple[str, str]

    def as_json(self) -> dict:
        return {"ends": list(self.ends), "names": list(self.names)}


@dataclass(frozen=True)
class Judgement:
    passed: bool
    words: str
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    gaps: tuple[Gap, ...] = field(default=())


# Names listed in words before "and N more": a large answer set stays readable.
WORDS_NAMES = 10


def _listed(names) -> str:
    names = list(names)
    if len(names) <= WORDS_NAMES:
        return ", ".join(names)
    return f"{', '.join(names[:WORDS_NAMES])} and {len(names) - WORDS_NAMES} more"


def judge(expected: Expected, answer: Answer) -> Judgement:
    """The outcome of one question, in words."""
    if answer.status == "not_understood":
        missing = expected.names if expected.expect != "yes_no" else ()
        return Judgement(
            passed=False,
            words=f"Not understood: {answer.message}",
            missing=tuple(missing),
        )
    if expected.expect == "concepts":
        return _judge_set(expected, answer)
    if expected.expect == "path":
        return _judge_path(expected, answer)
    return _judge_yes_no(expected, answer)


def _asked(answer: Answer) -> tuple[int, str] | None:
    plan = answer.plan
    if not plan.concepts:
        return None
    first = plan.concepts[0]
    return first.concept_id, first.name


def _judge_set(expected: Expected, answer: Answer) -> Judgement:
    found = {c.concept_id: c.name for c in answer.concepts}
    missing: list[str] = []
    gone: list[str] = []
    gaps: list[Gap] = []
    asked = _asked(answer)
    for name, concept_id in zip(expected.names, expected.ids, strict=True):
        if concept_id is None:
            gone.append(name)
            missing.append(name)
        elif concept_id not in found:
            missing.append(name)
            if asked is not None and asked[0] != concept_id:
                gaps.append(Gap(ends=(asked[0], concept_id), names=(asked[1], name)))
    wanted = {i for i in expected.ids if i is not None}
    extra = tuple(name for cid, name in found.items() if cid not in wanted)
    total = len(expected.names)
    if not missing:
        words = f"All {total} expected concept{'s' if total != 1 else ''} found."
        if extra:
            words += f" Found besides: {_listed(extra)}."
        return Judgement(passed=True, words=words, extra=extra)
    words = f"Missing {len(missing)} of {total}: {_listed(missing)}."
    if gone:
        words += f" No longer an active concept of the graph: {_listed(gone)}."
    if extra:
        words += f" Found besides: {_listed(extra)}."
    if answer.status == "no_path":
        words += f" The graph says: {answer.message}"
    return Judgement(
        passed=False, words=words, missing=tuple(missing), extra=extra, gaps=tuple(gaps)
    )


def _ends_of(path) -> frozenset[int]:
    return frozenset({path[0].frm, path[-1].to}) if path else frozenset()


def _judge_path(expected: Expected, answer: Answer) -> Judgement:
    a, b = expected.names
    ends_words = f"{a} and {b}"
    if None in expected.ids:
        gone = [n for n, i in zip(expected.names, expected.ids, strict=True) if i is None]
        return Judgement(
            passed=False,
            words=f"No longer an active concept of the graph: {_listed(gone)}.",
            missing=(f"a path between {ends_words}",),
        )
    want = frozenset(i for i in expected.ids if i is not None)
    gap = Gap(ends=(expected.ids[0] or 0, expected.ids[1] or 0), names=(a, b))
    for path in answer.paths:
        if _ends_of(path) == want:
            hops = len(path)
            return Judgement(
                passed=True,
                words=f"A path of {hops} hop{'s' if hops != 1 else ''} joins {ends_words}.",
            )
    if answer.paths:
        names = dict(answer.names)
        for c in answer.concepts:
            names.setdefault(c.concept_id, c.name)
        found = _listed(sorted(names.get(i, str(i)) for i in _ends_of(answer.paths[0])))
        words = f"The path found joins {found}, not {ends_words}."
    else:
        words = f"No path joins {ends_words}: {answer.message}"
    return Judgement(
        passed=False, words=words, missing=(f"a path between {ends_words}",), gaps=(gap,)
    )


def _yes_no_gap(expected: Expected, answer: Answer) -> tuple[Gap, ...]:
    if not expected.yes:
        return ()
    if len(expected.ids) == 2 and None not in expected.ids:
        return (
            Gap(
                ends=(expected.ids[0] or 0, expected.ids[1] or 0),
                names=(expected.names[0], expected.names[1]),
            ),
        )
    concepts = answer.plan.concepts
    if len(concepts) >= 2 and concepts[0].concept_id != concepts[1].concept_id:
        return (
            Gap(
                ends=(concepts[0].concept_id, concepts[1].concept_id),
                names=(concepts[0].name, concepts[1].name),
            ),
        )
    return ()


def _judge_yes_no(expected: Expected, answer: Answer) -> Judgement:
    want = "yes" if expected.yes else "no"
    if answer.yes is None:
        return Judgement(
            passed=False,
            words=f"Expected {want}; the answer is neither: {answer.message}",
            missing=(want,),
            gaps=_yes_no_gap(expected, answer),
        )
    got = "yes" if answer.yes else "no"
    if answer.yes == expected.yes:
        return Judgement(passed=True, words=f"The graph says {got}, as expected.")
    return Judgement(
        passed=False,
        words=f"Expected {want}; the graph says {got}: {answer.message}",
        missing=(want,),
        extra=(got,),
        gaps=_yes_no_gap(expected, answer),
    )


def expected_for(question, resolved: Mapping[str, int]) -> Expected:
    """A stored question's expectation, its names resolved (``resolved``: name -> id of
    the active concept it means now)."""
    names = tuple(question.expected_names)
    return Expected(
        expect=question.expect,
        names=names,
        ids=tuple(resolved.get(n) for n in names),
        yes=question.expected_yes,
    )
