"""INCEpTION/WebAnno annotations (a UIMA CAS) read with ``dkpro-cassis`` into the neutral
form of ``construction.annotations``. Pure Python, no Django.

Read: a CAS as XMI (with its type system, ``TypeSystem.xml``, which INCEpTION's
"UIMA CAS XMI" export puts beside it), a ZIP of such an export (every ``.xmi`` in it,
the type system found inside; an ``.xmi`` under a folder is named by that file: its
stem is the annotator, as INCEpTION's project export names it), or UIMA CAS JSON (type
system inside). cassis counts offsets in Python characters, converting the CAS's UTF-16
ones as it loads.

Spans: named entities (``…ner.type.NamedEntity``, label ``value``) and custom span
layers (``webanno.custom.*``); relations: any layer with ``Governor`` and ``Dependent``
features except the syntactic dependencies, labelled by its ``value`` or first text
feature, else by the layer's own name.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath

from .annotations import AnnotatedText, BadAnnotations, Entity, Problem, Relation, checked_span

__all__ = ["read_inception"]

NAMED_ENTITY = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
METADATA = "de.tudarmstadt.ukp.dkpro.core.api.metadata.type.DocumentMetaData"
SYNTAX = "de.tudarmstadt.ukp.dkpro.core.api.syntax.type.dependency.Dependency"
CUSTOM = "webanno.custom."
_STANDARD = {"begin", "end", "sofa", "Governor", "Dependent"}
#: A ZIP may unpack to at most this many times its size (and ``max_bytes`` in all).
MAX_INFLATION = 50


def read_inception(
    raw: bytes,
    *,
    filename: str,
    typesystem: bytes | None = None,
    annotator: str = "",
    max_bytes: int = 50_000_000,
) -> tuple[list[AnnotatedText], list[Problem]]:
    """Every annotated text of the file, and what could not be read, in words."""
    if raw[:4] == b"PK\x03\x04":
        return _read_zip(raw, typesystem=typesystem, annotator=annotator, max_bytes=max_bytes)
    stem = PurePosixPath(filename.replace("\\", "/")).stem or "document"
    if raw.lstrip()[:1] == b"{":
        cas = _load(raw, None, json_form=True)
    else:
        if typesystem is None:
            raise BadAnnotations(
                "an XMI file is read with its type system: give it with --typesystem "
                "(INCEpTION's XMI export puts TypeSystem.xml beside the .xmi), or import "
                "the export's ZIP"
            )
        cas = _load(raw, _typesystem(typesystem), json_form=False)
    item, problems = _text(cas, where=filename or stem, name=stem, annotator=annotator or "unknown")
    return [item], problems


def _typesystem(raw: bytes):
    from cassis import load_typesystem

    try:
        return load_typesystem(io.BytesIO(raw))
    except Exception as exc:  # cassis raises lxml's and its own errors alike
        raise BadAnnotations(f"the type system is not a UIMA type system ({exc})") from None


def _load(raw: bytes, typesystem, *, json_form: bool):
    from cassis import load_cas_from_json, load_cas_from_xmi

    if b"\x00" in raw:
        raise BadAnnotations("the file holds NUL bytes: it is not a UIMA CAS")
    try:
        if json_form:
            return load_cas_from_json(io.StringIO(raw.decode("utf-8-sig")))
        return load_cas_from_xmi(io.BytesIO(raw), typesystem=typesystem)
    except Exception as exc:  # a broken or foreign file: said in words, never a traceback
        form = "UIMA CAS JSON" if json_form else "UIMA CAS XMI"
        raise BadAnnotations(
            f"the file is not {form} that its type system explains ({exc})"
        ) from None


def _read_zip(raw: bytes, *, typesystem, annotator: str, max_bytes: int):
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        members = [m for m in archive.infolist() if not m.is_dir()]
    except zipfile.BadZipFile as exc:
        raise BadAnnotations(f"the file is not a readable ZIP ({exc})") from None
    if sum(m.file_size for m in members) > min(max_bytes, len(raw) * MAX_INFLATION):
        raise BadAnnotations("the ZIP unpacks to far more than it holds; it is not read")
    if typesystem is None:
        found = [m for m in members if m.filename.lower().endswith("typesystem.xml")]
        if not found:
            raise BadAnnotations("the ZIP holds no TypeSystem.xml to read its .xmi files with")
        typesystem = archive.read(found[0])
    types = _typesystem(typesystem)
    texts: list[AnnotatedText] = []
    problems: list[Problem] = []
    xmis = [m for m in members if m.filename.lower().endswith(".xmi")]
    if not xmis:
        raise BadAnnotations("the ZIP holds no .xmi file")
    for member in xmis:
        path = PurePosixPath(member.filename)
        who = annotator or (path.stem if len(path.parts) > 1 else "") or "unknown"
        try:
            cas = _load(archive.read(member), types, json_form=False)
        except BadAnnotations as exc:
            problems.append(Problem(member.filename, f"left out: {exc}"))
            continue
        name = path.parent.name if len(path.parts) > 1 else path.stem
        item, left_out = _text(cas, where=member.filename, name=name, annotator=who)
        texts.append(item)
        problems += left_out
    return texts, problems


def _label(fs, own: list[str], fallback: str) -> str:
    for name in ["value", *own]:
        value = getattr(fs, name, None) if name in own or name == "value" else None
        if isinstance(value, str) and value.strip():
            return value
    return fallback


def _text(cas, *, where: str, name: str, annotator: str) -> tuple[AnnotatedText, list[Problem]]:
    text = cas.sofa_string or ""
    title = name
    types = cas.typesystem
    if types.contains_type(METADATA):
        meta = next(iter(cas.select(METADATA)), None)
        title = (getattr(meta, "documentTitle", None) or title) if meta is not None else title
        name = getattr(meta, "documentId", None) or name if meta is not None else name
    item = AnnotatedText(
        where=where, name=str(name), title=str(title), text=text, annotator=annotator
    )
    problems: list[Problem] = []
    for layer in types.get_types():
        features = [f.name for f in layer.all_features]
        own = [f for f in features if f not in _STANDARD]
        is_relation = "Governor" in features and "Dependent" in features
        if is_relation and layer.name != SYNTAX:
            for fs in cas.select(layer.name):
                gov, dep = getattr(fs, "Governor", None), getattr(fs, "Dependent", None)
                if gov is None or dep is None:
                    continue
                item.relations.append(
                    Relation(
                        str(fs.xmiID),
                        str(gov.xmiID),
                        str(dep.xmiID),
                        _label(fs, own, layer.name.rsplit(".", 1)[-1]),
                    )
                )
        elif not is_relation and (layer.name == NAMED_ENTITY or layer.name.startswith(CUSTOM)):
            for fs in cas.select(layer.name):
                found = checked_span(text, fs.begin, fs.end, utf16=False)
                if isinstance(found, str):
                    problems.append(Problem(f"{where}, span {fs.xmiID}", f"left out: {found}"))
                    continue
                label = _label(fs, own, layer.name.rsplit(".", 1)[-1])
                item.entities.append(Entity(str(fs.xmiID), *found, label=label))
    return item, problems
