"""Importing annotations made in another tool (Label Studio, INCEpTION/WebAnno, doccano):
each annotated text kept as a source, and what its annotator marked queued for review
through construct's own path.

The file is read into one neutral form (``construction.annotations``, the CAS through
``construction.annotations_inception``); each annotated text becomes an ``Extraction``
(``construction.annotation_plan``) whose concepts are the labelled spans and whose
candidates are the labelled relations, mapped to the graph's relations by the mapping
file. From there it is construct's work, in construct's transaction under its mutex:
``process_source`` resolves, verifies and dedups (against the graph, the open and the
rejected proposals, contradictions, the gate), ``annotation_plan.pinned`` puts every
quote on the characters the annotator marked, and ``persist.persist_result`` writes the
proposals, each flagged with its origin ``annotator:TOOL:WHO`` (the Queue's flag filter
and its bulk preview decide one annotator's work together). The run is one ``annotations``
agent run, so its proposals are also one run in the Queue.

A text identical to one already stored (any source's revision) adds nothing: its
proposals quote that revision. Otherwise it is stored through ``source_import`` as a
source of its own (``TOOL-FILE-NAME``), which re-importing finds again. Whatever cannot
be used is said item by item (``Problem``), and the rest is imported; labels with no
mapping are counted, never guessed.

All or nothing where the file is at fault: everything is read and planned before the
first write, so a file that is not of its format, or holds nothing that could be
proposed (every item bad, skipped or unmapped), is refused whole and writes nothing (no
source, no run). Otherwise each usable text is stored and queued in a transaction of
its own (its source with its proposals, never one without the other) and the bad items
are reported beside them.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote, urlsplit

from django.conf import settings
from django.db import transaction
from django.utils.text import slugify

from construction.annotation_plan import Planned, pinned, plan_text
from construction.annotations import (
    TOOLS,
    AnnotatedText,
    AnnotationMap,
    BadAnnotations,
    Problem,
    TextLoader,
    origin_flag,
    parse_map,
    read_doccano,
)
from construction.annotations_labelstudio import read_labelstudio
from construction.pipeline import process_source
from kgreview.core.errors import DomainError, ValidationFailed
from kgreview.graph.concept_types import ConceptType
from kgreview.graph.models import RelationType, SourceRevision
from kgreview.graph.sources import source_import, text_sha256

from . import adapters
from .models import AgentRun
from .persist import persist_result
from .runs import agent_run_create, agent_run_finish, construct_mutex_hold
from .submission_items import Outcome, drop_outcome, dropped

if TYPE_CHECKING:
    from django.contrib.auth.models import User

__all__ = ["AnnotationReport", "annotations_import", "DEFAULT_CONFIDENCE", "folder_texts"]

#: How sure a person's label is taken to be, unless told (``--confidence``).
DEFAULT_CONFIDENCE = 0.9


@dataclass
class AnnotationReport:
    """What an import did: the run, each text's source and proposals, what was left out
    item by item, and the labels with no mapping with how often each was used."""

    tool: str
    filename: str
    run_id: int | None = None
    texts: list[dict] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)
    unmapped: dict[str, int] = field(default_factory=dict)
    proposed: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.proposed.values())

    @property
    def flags(self) -> list[str]:
        return sorted({t["flag"] for t in self.texts})

    def as_json(self) -> dict:
        return {
            "format": self.tool,
            "file": self.filename,
            "run": self.run_id,
            "texts": self.texts,
            "proposals": self.proposed,
            "flags": self.flags,
            "unmapped": self.unmapped,
            "problems": [p.as_json() for p in self.problems],
            "skipped": [p.as_json() for p in self.skipped],
            "failed": len(self.problems),
            "seconds": round(self.seconds, 3),
        }


#: Label Studio keeps an uploaded file as ``/data/upload/PROJECT/XXXXXXXX-NAME``.
_UPLOAD_PREFIX = re.compile(r"[0-9a-f]{8}-(.+)")


def folder_texts(folder: str | Path, *, max_bytes: int) -> TextLoader:
    """The texts a Label Studio export gives by URL or path, read from ``folder`` (the
    command's ``--texts``): the file named as the reference's last part (for
    ``/data/local-files/?d=dir/a.txt``, ``a.txt``; for an upload ``/data/upload/3/
    1a2b3c4d-a.txt``, ``1a2b3c4d-a.txt`` or ``a.txt``), directly in the folder, a regular
    file of UTF-8 text. Nothing is ever downloaded."""
    root = Path(folder)

    def load(reference: str) -> str:
        parts = urlsplit(reference)
        path = parse_qs(parts.query).get("d", [parts.path])[0]
        name = PurePath(unquote(path).replace("\\", "/")).name
        names = [name]
        if match := _UPLOAD_PREFIX.fullmatch(name):
            names.append(match.group(1))
        for candidate in names:
            if candidate in {"", ".", ".."}:
                continue
            file = root / candidate
            if file.is_symlink() or not file.is_file():
                continue
            if file.stat().st_size > max_bytes:
                raise LookupError(f"is {file} of more than {max_bytes:,} bytes: not read")
            try:
                return file.read_bytes().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise LookupError(f"is {file}, which is not UTF-8 text") from None
        tried = " or ".join(f'"{n}"' for n in names if n)
        raise LookupError(f"is not in {root} (no regular file named {tried or 'by it'} there)")

    return load


def _read(
    tool: str,
    raw: bytes,
    *,
    filename: str,
    annotator: str,
    typesystem: bytes | None,
    load_text: TextLoader | None = None,
):
    if tool == "labelstudio":
        return read_labelstudio(raw, annotator=annotator, load_text=load_text)
    if tool == "doccano":
        return read_doccano(raw, annotator=annotator)
    if tool == "inception":
        from construction.annotations_inception import read_inception

        return read_inception(
            raw,
            filename=filename,
            typesystem=typesystem,
            annotator=annotator,
            max_bytes=settings.KG_MAX_SOURCE_BYTES,
        )
    raise ValidationFailed(f'"{tool[:40]}" is not a format kgreview reads: {", ".join(TOOLS)}.')


def _check_map(mapping: AnnotationMap) -> None:
    """Every key the mapping names exists: an active relation, a concept type."""
    active = set(RelationType.objects.filter(active=True).values_list("key", flat=True))
    for label, key in mapping.relations.items():
        if key not in active:
            raise ValidationFailed(
                f'The mapping maps the relation label "{label[:64]}" to "{key[:64]}", which is '
                f"no active relation of the graph; its relations are "
                f"{', '.join(sorted(active)) or 'none yet'}."
            )
    types = {k for k in (mapping.entities or {}).values() if k}
    known = set(ConceptType.objects.filter(key__in=types).values_list("key", flat=True))
    for label, key in (mapping.entities or {}).items():
        if key and key not in known:
            raise ValidationFailed(
                f'The mapping gives the span label "{label[:64]}" the concept type "{key[:64]}", '
                "which the graph does not have."
            )


def _slug(tool: str, filename: str, name: str) -> str:
    stem = slugify(PurePath(filename.replace("\\", "/")).stem)[:60].strip("-") or "file"
    part = slugify(name)[:100].strip("-")
    if not part:
        part = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:10]
    return f"{tool}-{stem}-{part}"[:200].strip("-")


def _store(item: AnnotatedText, text: str, *, tool: str, filename: str, acting_user: User | None):
    """The revision holding ``text``: one already stored with this very text, or a new
    source (or revision) through ``source_import``; with the outcome in a word."""
    digest = text_sha256(text)
    for revision in (
        SourceRevision.objects.filter(sha256=digest).select_related("source").order_by("pk")
    ):
        if revision.text == text:
            return revision, "unchanged"
    stored = source_import(
        slug=_slug(tool, filename, item.name),
        title=item.title,
        text=text,
        origin=f"{TOOLS[tool]} annotations: {PurePath(filename).name}",
        media_type="text/plain",
        text_format=SourceRevision.TextFormat.PLAIN,
        original=text.encode("utf-8"),
        filename=PurePath(filename).name,
        acting_user=acting_user,
    )
    stored.revision.source = stored.source
    return stored.revision, stored.outcome


def _queue_text(
    run: AgentRun,
    item: AnnotatedText,
    plan: Planned,
    *,
    tool: str,
    filename: str,
    confidence: float,
    acting_user: User | None,
) -> dict:
    """One annotated text, stored and queued in one transaction under construct's mutex."""
    flag = origin_flag(tool, item.annotator)
    with transaction.atomic():
        revision, outcome = _store(
            item, plan.text, tool=tool, filename=filename, acting_user=acting_user
        )
        construct_mutex_hold()  # the queue's writers take turns (``agents.persist``)
        relations = adapters.relation_table()
        index = adapters.INDEX_CACHE.get()
        graph = adapters.DbGraphView(relations)
        result = process_source(
            doc=adapters.source_doc(revision),
            extraction=plan.extraction,
            vocabulary=adapters.vocabulary(relations),
            index=index,
            graph=graph,
            gate=settings.KG_CONFIDENCE_GATE,
            ontology=adapters.ontology(),
        )
        result = pinned(
            result,
            plan,
            index=index,
            graph=graph,
            annotator=item.annotator,
            tool=tool,
            confidence=confidence,
        )
        stats = persist_result(
            run=run, revision=revision, result=result, flags=(flag,), merged_gain_flags=True
        )
    return {
        "where": item.where,
        "annotator": item.annotator,
        "flag": flag,
        "source": revision.source.slug,
        "revision": revision.number,
        "source_outcome": outcome,
        "proposals": {k: sum(v.values()) for k, v in stats["proposals"].items()},
        "dropped": stats["dropped"],
        "outcomes": _outcomes(result.dropped, stats, flag),
    }


def _outcomes(drops, stats: dict, flag: str) -> list[dict]:
    """What became of each labelled item that queued nothing new, in words, by the
    writing API's rule (``submission_items.drop_outcome``): ``merged`` into the open
    proposal that already proposes it (which now carries ``flag`` too), or ``dropped``
    with its reason."""
    gained = stats.get("gained", {})
    items = [(d.candidate, drop_outcome(d.reason, d.detail, d.twin_of)) for d in drops]
    items += [(m["item"], drop_outcome("duplicate", "", m["proposal_id"])) for m in stats["merged"]]
    out = []
    for candidate, answer in items:
        if answer.result == "merged" and answer.proposal_id is not None:
            answer = _flagged(answer, gained.get(answer.proposal_id, "gained"), flag)
        out.append({"item": _item_words(candidate), **answer.as_json()})
    return out


def _flagged(answer: Outcome, gain: str, flag: str) -> Outcome:
    """A merge as it went: the proposal gained ``flag``, was decided meanwhile (nothing
    merged), or holds as many flags as it can."""
    number = answer.proposal_id
    if gain == "decided":
        return dropped(
            "duplicate",
            f"Proposal #{number}, which proposes the same change, was decided while this text "
            f"was read; importing the file again proposes it anew or says why not.",
        )
    if gain == "full":
        return replace(
            answer,
            detail=f"{answer.detail} It holds as many flags as it can, so {flag} was not added.",
        )
    return replace(answer, detail=f"{answer.detail} It is flagged {flag} too.")


def _item_words(candidate: dict) -> str:
    """A dropped candidate as its annotator marked it: a span, or a relation."""
    if "span" in candidate:
        return f'span "{candidate["span"]}"'
    return (
        f'relation "{candidate.get("source", "")}" {candidate.get("relation", "")} '
        f'"{candidate.get("target", "")}"'
    )


def annotations_import(
    *,
    raw: bytes,
    filename: str,
    tool: str,
    acting_user: User | None,
    mapping: bytes | None = None,
    annotator: str = "",
    typesystem: bytes | None = None,
    load_text: TextLoader | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    trigger: str = AgentRun.Trigger.CLI,
) -> AnnotationReport:
    """Import an annotation tool's export as proposals (one ``annotations`` run).

    ``acting_user`` is who imports it (the sources' imports and the run's start are
    audited), or ``None`` for the command line. ``load_text`` reads the texts a Label
    Studio export gives by URL or path (``folder_texts``); without it such tasks are
    reported. A file that is not of the format at all, that holds nothing to propose,
    or a mapping that is not one or names keys the graph lacks, is refused in words
    (``ValidationFailed``) before anything is written; any other trouble is a problem of
    the report, item by item, and the rest is imported.
    """
    started = time.perf_counter()
    name = PurePath(filename).name
    if not 0.0 <= confidence <= 1.0:
        raise ValidationFailed(f"A confidence lies between 0 and 1, not {confidence}.")
    try:
        annotation_map = parse_map(mapping)
        texts, found = _read(
            tool,
            raw,
            filename=filename,
            annotator=annotator,
            typesystem=typesystem,
            load_text=load_text,
        )
    except BadAnnotations as exc:
        raise ValidationFailed(f"{name}: {exc}.") from None
    _check_map(annotation_map)
    report = AnnotationReport(tool=tool, filename=name)
    for problem in found:
        (report.skipped if problem.skipped else report.problems).append(problem)
    plans: list[tuple[AnnotatedText, Planned]] = []
    for item in texts:
        if not item.entities and not item.relations:
            report.skipped.append(
                Problem(
                    item.where,
                    "marks nothing kgreview reads (no labelled span or relation)",
                    skipped=True,
                )
            )
            continue
        plan = plan_text(item, annotation_map, tool=tool, confidence=confidence)
        if isinstance(plan, Problem):
            report.problems.append(plan)
            continue
        report.problems += plan.problems
        for words, n in plan.unmapped.items():
            report.unmapped[words] = report.unmapped.get(words, 0) + n
        if plan.labelled or plan.extraction.candidates:
            plans.append((item, plan))
    if not plans:
        raise ValidationFailed(_nothing_to_import(name, report))
    run = agent_run_create(
        agent=AgentRun.Agent.ANNOTATIONS,
        trigger=trigger,
        acting_user=acting_user,
        provider=tool,
        params={"file": report.filename, "format": tool, "confidence": confidence},
        total=len(plans),
    )
    report.run_id = run.pk
    for item, plan in plans:
        try:
            done = _queue_text(
                run,
                item,
                plan,
                tool=tool,
                filename=filename,
                confidence=confidence,
                acting_user=acting_user,
            )
        except DomainError as exc:
            report.problems.append(Problem(item.where, f"left out: {exc}"))
            continue
        report.texts.append(done)
        for kind, n in done["proposals"].items():
            report.proposed[kind] = report.proposed.get(kind, 0) + n
    report.seconds = time.perf_counter() - started
    with transaction.atomic():
        agent_run_finish(
            run,
            status=AgentRun.Status.SUCCEEDED,
            stats={
                "proposals": report.total,
                "by_kind": report.proposed,
                "texts": len(report.texts),
                "problems": len(report.problems),
                "skipped": len(report.skipped),
                "unmapped": report.unmapped,
            },
        )
    return report


def _nothing_to_import(name: str, report: AnnotationReport) -> str:
    """Why a file that was read yields nothing to propose, in words (the first few)."""
    reasons = [str(p) for p in (report.problems + report.skipped)[:5]]
    more = len(report.problems) + len(report.skipped) - len(reasons)
    if more > 0:
        reasons.append(f"and {more} more")
    if report.unmapped:
        labels = ", ".join(f"{w} ({n})" for w, n in sorted(report.unmapped.items())[:5])
        reasons.insert(0, f"labels with no mapping: {labels}")
    why = "; ".join(reasons) or "it holds no annotated text"
    return f"{name}: nothing to import, so nothing was written: {why}."
