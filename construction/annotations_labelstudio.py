"""Label Studio's exports read into the neutral form of ``annotations``: the full JSON
export (tasks with their annotations: labelled spans and relations) and JSON-MIN (one
record per annotation, spans only). Predictions (a model's, not a person's) are never
read; cancelled annotations are reported as skipped. A task's text given by reference (a
URL, an upload or local-files path) is read through the caller's ``TextLoader``, never
downloaded. Pure Python, no Django."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from .annotations import (
    AnnotatedText,
    BadAnnotations,
    Entity,
    Problem,
    Relation,
    TextLoader,
    annotator_of,
    checked_span,
    plain_text,
    read_json,
    reference_id,
    region_id,
    shortened,
)

__all__ = ["is_reference", "read_labelstudio"]

#: A JSON-MIN record's own keys (Label Studio's converter adds them to the task's data).
_MIN_KEYS = {"id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time"}
_MIN_KEYS |= {"agreement", "history", "was_cancelled"}
#: A task's text given by reference: a URL, Label Studio's upload or local-files path.
_REFERENCE = re.compile(r"(?:[a-z][a-z0-9+.-]*://|/data/(?:upload|local-files)/)\S*\Z|/\S+\Z")


def _pick_text(fields: Mapping, prefer: Iterable[str] = ()) -> tuple[str, str] | str:
    """The (key, value) of a task's text among its string fields, or why none is clear."""
    strings = {k: v for k, v in fields.items() if isinstance(k, str) and isinstance(v, str)}
    for key in ("text", *prefer):
        if key in strings:
            return key, strings[key]
    if len(strings) == 1:
        return next(iter(strings.items()))
    if not strings:
        return 'has no text to read ("data": {"text": …})'
    names = ", ".join(shortened(k, 20) for k in list(strings)[:6])
    return (
        f'has several text fields ({names}) and none is called "text": which one was '
        "labelled is not clear"
    )


def is_reference(value: str) -> bool:
    """Whether a task's text is a URL or a path to the text rather than the text: Label
    Studio's ``valueType="url"`` (``/data/upload/…``, ``/data/local-files/?d=…``,
    ``https://…``, ``s3://…``)."""
    return len(value) <= 2048 and _REFERENCE.match(value) is not None


def _resolve(value: str, where: str, load_text: TextLoader | None) -> str | Problem:
    """A task's text: itself, or the text its reference names (from ``load_text``)."""
    if not is_reference(value):
        return plain_text(value)
    if load_text is None:
        return Problem(
            where,
            f'left out: its text is not in the export but at "{shortened(value, 120)}" (a text '
            "Label Studio loads by URL); give the folder holding that file with --texts DIR "
            "(nothing is downloaded)",
        )
    try:
        return plain_text(load_text(value))
    except LookupError as exc:
        return Problem(where, f'left out: its text "{shortened(value, 120)}" {exc.args[0]}')


def read_labelstudio(
    raw: bytes, *, annotator: str = "", load_text: TextLoader | None = None
) -> tuple[list[AnnotatedText], list[Problem]]:
    """A Label Studio export, either form:

    - **JSON** (the full export): a list of tasks, each with ``data`` (its ``text``) and
      its ``annotations`` (one per annotator: ``completed_by``), whose ``result`` holds
      span labels (``type: "labels"``, ``value.start/end/text/labels``) and relations
      (``type: "relation"``, ``from_id``, ``to_id``, ``direction``, ``labels``);
    - **JSON-MIN**: a list of records, one per annotation: the task's data fields, its
      ``id``, each labelling tag's regions under the tag's name (``start``, ``end``,
      ``text``, ``labels``), ``annotator``, ``annotation_id``. Label Studio leaves
      relations and cancelled annotations out of it.

    A task whose text is a URL or path (``valueType="url"``) is read through
    ``load_text``, or refused in words. Predictions (a model's, not a person's) are
    never read; cancelled (skipped) annotations and tasks with nothing annotated are
    reported as skipped."""
    data = read_json(raw, "a Label Studio JSON export")
    if isinstance(data, dict):
        if not isinstance(data.get("data"), dict) and not (_MIN_KEYS - {"id"}) & set(data):
            keys = ", ".join(shortened(k, 20) for k in list(data)[:6]) or "none"
            raise BadAnnotations(
                f"a Label Studio export is a list of tasks; this file is one JSON object with "
                f"the keys {keys}, which is no task"
            )
        data = [data]
    if not isinstance(data, list):
        raise BadAnnotations("a Label Studio export is a list of tasks")
    texts: list[AnnotatedText] = []
    problems: list[Problem] = []
    minimal = False
    for number, task in enumerate(data, start=1):
        task_id = shortened(task.get("id", number)) if isinstance(task, dict) else str(number)
        where = f"task {task_id}"
        if not isinstance(task, dict):
            problems.append(Problem(where, "is not a task (a JSON object)"))
        elif isinstance(task.get("data"), dict):
            _labelstudio_task(task, task_id, annotator, load_text, texts, problems)
        elif (_MIN_KEYS - {"id"}) & set(task):
            minimal = True
            _labelstudio_min(task, task_id, annotator, load_text, texts, problems)
        else:
            problems.append(
                Problem(where, 'is neither a task ("data", "annotations") nor a JSON-MIN record')
            )
    if minimal:
        problems.append(
            Problem(
                "the file",
                "is Label Studio's JSON-MIN export, which carries no relations: only the "
                "labelled spans were read (export as JSON to import relations too)",
                skipped=True,
            )
        )
    return texts, problems


def _labelstudio_task(task, task_id, annotator, load_text, texts, problems) -> None:
    where = f"task {task_id}"
    data = task["data"]
    annotations = task.get("annotations", task.get("completions"))
    if not isinstance(annotations, list):
        annotations = []
    if not annotations:
        predicted = isinstance(task.get("predictions"), list) and task["predictions"]
        problems.append(
            Problem(
                where,
                "has only predictions (a model's, not a person's), which are not imported"
                if predicted
                else "has no annotations",
                skipped=True,
            )
        )
        return
    labelled: list[str] = [
        r["to_name"]
        for a in annotations
        if isinstance(a, dict) and isinstance(a.get("result"), list)
        for r in a["result"]
        if isinstance(r, dict) and isinstance(r.get("to_name"), str)
    ]
    picked = _pick_text(data, prefer=labelled)
    if isinstance(picked, str):
        problems.append(Problem(where, picked))
        return
    text: str | Problem | None = None  # read once, for its first annotation kept
    for index, annotation in enumerate(annotations, start=1):
        if not isinstance(annotation, dict) or not isinstance(annotation.get("result"), list):
            problems.append(Problem(f"{where}, annotation {index}", "has no result list"))
            continue
        place = f"{where}, annotation {shortened(annotation.get('id', index))}"
        who = annotator or annotator_of(annotation.get("completed_by")) or "unknown"
        if annotation.get("was_cancelled") or annotation.get("skipped"):
            problems.append(
                Problem(
                    place, f"was skipped (cancelled) by {who}: nothing of it is read", skipped=True
                )
            )
            continue
        if text is None:
            text = _resolve(picked[1], where, load_text)
            if isinstance(text, Problem):
                problems.append(text)
        if isinstance(text, Problem):
            continue
        item = AnnotatedText(
            where=place,
            name=f"task-{task_id}",
            title=plain_text(str(data.get("title") or f"Task {task_id}"))[:200],
            text=text,
            annotator=who,
        )
        _labelstudio_results(item, annotation["result"], problems)
        texts.append(item)


def _labelstudio_min(record, task_id, annotator, load_text, texts, problems) -> None:
    """One JSON-MIN record: one annotation of one task, its data fields beside it."""
    where = f"task {task_id}"
    regions = {
        k: v
        for k, v in record.items()
        if k not in _MIN_KEYS and isinstance(v, list) and v and all(isinstance(x, dict) for x in v)
    }
    fields = {k: v for k, v in record.items() if k not in _MIN_KEYS and k not in regions}
    if record.get("annotation_id") is None and not regions:
        problems.append(Problem(where, "has no annotations", skipped=True))
        return
    picked = _pick_text(fields)
    if isinstance(picked, str):
        problems.append(Problem(where, picked))
        return
    text = _resolve(picked[1], where, load_text)
    if isinstance(text, Problem):
        problems.append(text)
        return
    item = AnnotatedText(
        where=f"{where}, annotation {shortened(record.get('annotation_id'))}",
        name=f"task-{task_id}",
        title=plain_text(str(fields.get("title") or f"Task {task_id}"))[:200],
        text=text,
        annotator=annotator or annotator_of(record.get("annotator")) or "unknown",
    )
    results = [
        {"id": f"{shortened(name, 30)}-{n}", "type": "labels", "value": value}
        for name, values in regions.items()
        for n, value in enumerate(values, start=1)
    ]
    _labelstudio_results(item, results, problems)
    texts.append(item)


def _labelstudio_results(item: AnnotatedText, results: list, problems: list[Problem]) -> None:
    relations = []
    seen: set[str] = set()
    for number, result in enumerate(results, start=1):
        raw_id = result.get("id") if isinstance(result, dict) else None
        rid = region_id(raw_id, number)
        where = f"{item.where}, region {rid or number}"
        if not isinstance(result, dict):
            problems.append(Problem(where, "is not a result (a JSON object)"))
        elif result.get("type") == "relation":
            relations.append((f"{item.where}, relation {number}", result))
        elif isinstance(result.get("value"), dict) and "start" in result["value"]:
            found = _labelstudio_span(item, rid, result["value"], seen)
            if isinstance(found, str):
                problems.append(Problem(where, f"left out: {found}"))
            else:
                seen.add(found.id)
                item.entities.append(found)
        # else: a choice, a rating, a text area: nothing at offsets to read
    for where, result in relations:
        ends = [reference_id(result.get(k)) for k in ("from_id", "to_id")]
        if ends[0] is None or ends[1] is None:
            problems.append(Problem(where, "left out: from_id and to_id name no regions"))
            continue
        if result.get("direction") == "left":
            ends.reverse()
        labels = result.get("labels") or [""]
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            problems.append(Problem(where, "left out: its labels are not a list of words"))
            continue
        pairs = [(ends[0], ends[1])]
        if result.get("direction") == "bi":
            pairs.append((ends[1], ends[0]))
        for label in labels:
            for a, b in pairs:
                item.relations.append(Relation(f"{a}>{b}", str(a), str(b), plain_text(label)))


def _labelstudio_span(item: AnnotatedText, rid: str | None, value: dict, seen: set) -> Entity | str:
    """A labelled region of the text, or why it is left out (words)."""
    if rid is None:
        return "its id is not a word or a number"
    if isinstance(value.get("start"), str) and "startOffset" in value:
        return "it marks HTML (an XPath and offsets), not plain text"
    labels = value.get("labels", value.get("hypertextlabels", []))
    label_text = value.get("text") if isinstance(value.get("text"), str) else None
    found = checked_span(item.text, value.get("start"), value.get("end"), label_text=label_text)
    if isinstance(found, str):
        return found
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        return "its labels are not a list of words"
    if rid in seen:
        return "another region of this annotation has the same id"
    return Entity(rid, *found, label=plain_text(labels[0]) if labels else "")
