"""Reading a document in a child process whose memory and processor time are capped.

``read_bounded`` is ``read_document`` for files that may hold a bomb: a PDF, Word or HTML
file is read by a fresh Python interpreter (``subprocess``, never a fork of the caller,
which may hold threads and a database connection) that caps its own address space
(``RLIMIT_AS``) and processor time (``RLIMIT_CPU``) before it reads a byte. Whatever the
file makes the readers do, the caller's memory does not grow past the text it gets back,
and a refusal says which limit was hit. Markdown and plain text are read in the calling
process: their text is never larger than the file, which ``max_bytes`` bounds.

The child gets one JSON line (file name, ``max_bytes``, the limits) and the file's bytes
on its standard input, and writes the ``Document`` as JSON, or a refusal, to its standard
output; the readers' own chatter goes to its standard error, which is kept in a temporary
file (not in memory) and only its end is reported when the child fails for another
reason.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from construction.doc_limits import MB, ReadLimits
from construction.documents import BadDocument, Document, read_document
from construction.formats import format_for
from construction.types import Section

__all__ = ["in_child", "read_bounded"]

log = logging.getLogger(__name__)

ROOT = str(Path(__file__).resolve().parent.parent)  # the folder holding ``construction``
MEMORY_EXIT = 3  # the child ran out of its address space (a MemoryError reached the top)
REFUSED_EXIT = 4  # the file was refused in words (the JSON says why)
# The child's processor time: SIGXCPU at the soft limit; the hard limit, a second later,
# kills a child stuck in C code that never returns to take the signal.
_CPU_SIGNALS = {signal.SIGXCPU, signal.SIGKILL}
_CHILD = (
    f"import sys; sys.path.insert(0, {ROOT!r}); "
    "from construction.doc_sandbox import _child_main; _child_main()"
)
# -P: the working folder is not put on the child's path (a stray zlib.py there is not
# imported in its place).
_COMMAND = [sys.executable, "-P", "-c", _CHILD]


def in_child(filename: str) -> bool:
    """Whether ``read_bounded`` reads this file in a child process: its format is one
    that can inflate (``formats.FORMATS``, ``sandboxed``)."""
    found = format_for(filename)
    return found is not None and found.sandboxed


def read_bounded(raw: bytes, *, filename: str, max_bytes: int, limits: ReadLimits) -> Document:
    """``read_document`` within ``limits``, in a child process for the formats that can
    inflate; raises ``BadDocument`` in words, naming the limit a refused file hit."""
    if not in_child(filename):
        return read_document(raw, filename=filename, max_bytes=max_bytes, limits=limits)
    header = json.dumps({"filename": filename, "max_bytes": max_bytes, "limits": limits.as_json()})
    # Wall-clock time is a backstop for a child that waits instead of computing (the CPU
    # limit cannot see it): twice its processor time, plus the interpreter's start.
    wall = 2 * limits.cpu_seconds + 30
    with tempfile.TemporaryFile() as errors:
        try:
            done = subprocess.run(
                _COMMAND,
                input=header.encode("utf-8") + b"\n" + raw,
                stdout=subprocess.PIPE,
                stderr=errors,
                timeout=wall,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise BadDocument(limits.time()) from None
        except OSError as exc:
            raise BadDocument(
                f"could not start the reader: {exc.strerror or exc.__class__.__name__}"
            ) from None
        code = done.returncode
        if code in (0, REFUSED_EXIT):
            try:
                answer = json.loads(done.stdout)
                if code == REFUSED_EXIT:
                    refusal = str(answer["refused"])
                else:
                    return _document(answer)
            except (ValueError, KeyError, TypeError):
                refusal = "the reader failed (its answer could not be read)"
            raise BadDocument(refusal)
        if code == MEMORY_EXIT:
            raise BadDocument(limits.memory())
        if code < 0 and -code in _CPU_SIGNALS:
            raise BadDocument(limits.time())
        errors.seek(max(0, errors.seek(0, os.SEEK_END) - 2000))
        tail = errors.read().decode("utf-8", "replace").strip().splitlines()
    if code < 0:
        # A C library that cannot allocate (PDFium) ends the process instead of failing:
        # with the address space capped, that is the likeliest reason.
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        raise BadDocument(f"{limits.memory()}: the reader stopped ({name})")
    log.warning("reading %r failed (exit %s): %s", filename, code, "\n".join(tail[-20:]))
    raise BadDocument(f"the reader failed ({tail[-1][:200] if tail else f'exit {code}'})")


def _document(data: dict) -> Document:
    return Document(
        title=data["title"],
        text=data["text"],
        media_type=data["media_type"],
        text_format=data["text_format"],
        sections=tuple(Section.from_json(s) for s in data["sections"]),
        pages=tuple(data["pages"]),
        slug=data["slug"],
        notes=tuple(data["notes"]),
    )


def _cap(limits: ReadLimits) -> None:
    """This process's own limits: address space, processor time, no core file."""
    try:
        import resource
    except ImportError:  # not a POSIX system: the readers' own checks still hold
        return
    memory = limits.memory_mb * MB
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _child_main() -> None:
    """The child: read stdin, cap itself, read the document, answer on stdout."""
    out = os.dup(1)
    os.dup2(2, 1)  # what the libraries print goes to stderr; stdout carries the answer
    payload = sys.stdin.buffer.read()
    line, _, raw = payload.partition(b"\n")
    del payload
    header = json.loads(line)
    limits = ReadLimits.from_json(header["limits"])
    _cap(limits)
    try:
        document = read_document(
            raw, filename=header["filename"], max_bytes=header["max_bytes"], limits=limits
        )
        answer = json.dumps(
            {
                "title": document.title,
                "text": document.text,
                "media_type": document.media_type,
                "text_format": document.text_format,
                "sections": [s.as_json() for s in document.sections],
                "pages": list(document.pages),
                "slug": document.slug,
                "notes": list(document.notes),
            }
        ).encode("utf-8")
        code = 0
    except BadDocument as exc:
        answer, code = json.dumps({"refused": str(exc)}).encode("utf-8"), REFUSED_EXIT
    except MemoryError:
        os._exit(MEMORY_EXIT)  # nothing more is allocated: say it and go
    with os.fdopen(out, "wb") as stdout:
        stdout.write(answer)
    sys.exit(code)
