"""The embedded broker: kombu's filesystem transport, made to survive its own folder.

kombu's filesystem transport keeps each message as one file in a queue folder. Three of
its habits take the whole runtime down, and this subclass changes them:

- **A malformed file** (not JSON, not a kombu envelope, a body that does not decode as
  JSON) made the worker exit with "Unrecoverable error", again at every restart. Here it
  is moved into the quarantine folder with a ``.reason.txt`` beside it, the reason is
  logged, and the next message is read.
- **A missing folder** (queue, control, quarantine) raised on every poll and on every
  publish. Here each folder is created again when it is needed, on the worker's side and
  on the web's (so "Run now" still queues).
- **A half-written file** could be read by a worker while its producer was still writing
  it. Here a message is written under a name no reader looks at and renamed into place.
- **Something that is not a regular file** under a message's or an exchange table's name
  (a FIFO, a device, a folder, a symlink to one of these) froze the worker: reading a FIFO
  waits for a writer that never comes, and ``serve`` restarts a worker that exits, not one
  that hangs. Here its kind is read with ``stat`` (which opens nothing) and it is
  quarantined with a note, renamed unopened; the next message is read.

A message is still deleted when a worker takes it (the transport has no redelivery), so
recovering the work of a killed worker is the reaper's job (``agents.reaper``), on every
broker alike. Settings select this transport with ``CELERY_BROKER_TRANSPORT``.
"""

from __future__ import annotations

import logging
import os
import stat
import uuid
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from queue import Empty
from time import monotonic_ns

from kombu.exceptions import ChannelError
from kombu.serialization import loads as decode_body
from kombu.transport import filesystem
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)

#: Bodies the embedded broker accepts; anything else is quarantined, never decoded.
ACCEPTED_CONTENT = ["application/json"]


class Malformed(Exception):
    """A message file that no consumer can use; the words say why."""


def envelope_problem(raw: bytes, channel: filesystem.Channel) -> str | None:
    """Why ``raw`` cannot be delivered, in words, or None if it is a usable message."""
    try:
        payload = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return f"not JSON ({exc})"
    if not isinstance(payload, dict) or not isinstance(payload.get("properties"), dict):
        return "not a kombu message (no properties)"
    properties = payload["properties"]
    if "delivery_tag" not in properties or not isinstance(
        properties.get("delivery_info", {}), dict
    ):
        return "not a kombu message (no delivery tag or delivery info)"
    try:
        message = channel.Message(payload, channel=channel)
        if message.body:
            decode_body(
                message.body,
                message.content_type,
                message.content_encoding,
                accept=ACCEPTED_CONTENT,
            )
    except Exception as exc:  # any decode failure makes the file undeliverable
        return f"body does not decode ({exc.__class__.__name__}: {exc})"
    return None


def not_a_regular_file(path: Path) -> str | None:
    """What ``path`` is, in words, when it is not a regular file (None when it is one or
    when it is gone). Reads its kind with ``stat``, which opens nothing: opening a FIFO
    waits for a writer, and opening a device can act on it."""
    try:
        mode = os.stat(path).st_mode  # follows a symlink to what it points at
    except FileNotFoundError:
        try:
            os.lstat(path)
        except FileNotFoundError:
            return None
        return "not a regular file (a symlink to nothing)"
    except OSError as exc:
        return f"not a regular file (its kind cannot be read: {exc})"
    if stat.S_ISREG(mode):
        return None
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((words for test, words in kinds if test(mode)), "of an unknown kind")
    via = " behind a symlink" if os.path.islink(path) else ""
    return f"not a regular file ({kind}{via}); it was not opened"


_WRITES = count()


class Channel(filesystem.Channel):
    """kombu's filesystem channel with quarantine, folders recreated and atomic writes."""

    def _folder(self, path: str | Path) -> Path:
        """The folder, created again (with its parents) if someone removed it."""
        folder = Path(path)
        if not folder.is_dir():
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a channel error: Celery reconnects instead of exiting
                raise ChannelError(f"The broker folder {folder} cannot be made: {exc}") from exc
            log.warning("broker: the folder %s was missing and was created again", folder)
        return folder

    @property
    def quarantine_folder(self) -> Path:
        default = Path(self.data_folder_in).parent / "quarantine"
        return Path(self.transport_options.get("quarantine_folder", default))

    def quarantine(self, path: Path, reason: str) -> Path:
        """Move an unusable file aside with its reason beside it; log what happened.
        The move is a rename: it never opens the file (a FIFO or a device included)."""
        folder = self._folder(self.quarantine_folder)
        target = folder / path.name
        if target.exists():
            target = folder / f"{uuid.uuid4().hex[:8]}-{path.name}"
        try:
            os.replace(path, target)
        except FileNotFoundError:
            return target  # another process moved it first
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        target.with_name(target.name + ".reason.txt").write_text(
            f"{stamp} quarantined by pid {os.getpid()}: {reason}\n", encoding="utf-8"
        )
        log.error(
            "broker: quarantined the message file %s: %s. It was moved to %s; the worker "
            "goes on with the next message.",
            path.name,
            reason,
            target,
        )
        return target

    # --- messages -----------------------------------------------------------------------

    # kombu's own signature (its filesystem channel already renames AbstractChannel's).
    def _put(self, queue, payload, **kwargs):  # type: ignore[override]
        """Write the message under a name readers skip, then rename it into place."""
        folder = self._folder(self.data_folder_out)
        # Names sort in the order written: nanoseconds, then this process's own count for
        # two writes in one tick (a random part alone would order them at random).
        name = f"{monotonic_ns()}_{next(_WRITES):012d}_{uuid.uuid4()}.{queue}.msg"
        partial = folder / f"{name}.part"
        try:
            partial.write_bytes(dumps(payload).encode("utf-8"))
            os.replace(partial, folder / name)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise ChannelError(f"Cannot add file {name!r} to {folder}: {exc}") from exc

    def _take(self, folder: Path, name: str) -> Path | None:
        """Move one message file out of the queue so no other reader gets it (None if
        another reader was first)."""
        taken = self._folder(self.processed_folder) / name
        try:
            os.rename(folder / name, taken)
        except FileNotFoundError:
            return None
        except OSError as exc:  # a channel error: Celery reconnects instead of exiting
            raise ChannelError(f"Cannot take {name!r} from {folder}: {exc}") from exc
        return taken

    def _get(self, queue, timeout=None):
        """The next usable message of ``queue``; unusable files are quarantined."""
        folder = self._folder(self.data_folder_in)
        wanted = f"{queue}.msg"
        for name in sorted(os.listdir(folder)):
            if name.partition(".")[2] != wanted:
                continue
            irregular = not_a_regular_file(folder / name)
            if irregular is not None:
                self.quarantine(folder / name, irregular)
                continue
            taken = self._take(folder, name)
            if taken is None:
                continue
            try:
                raw = self._read_regular(taken)
            except Malformed as exc:
                self.quarantine(taken, str(exc))
                continue
            except OSError as exc:
                self.quarantine(taken, f"unreadable ({exc})")
                continue
            problem = envelope_problem(raw, self)
            if problem is not None:
                self.quarantine(taken, problem)
                continue
            if not self.store_processed:
                taken.unlink(missing_ok=True)
            return loads(raw.decode("utf-8"))
        raise Empty()

    @staticmethod
    def _read_regular(path: Path) -> bytes:
        """The bytes of ``path``, refusing (Malformed) anything that is not a regular file.
        Checked again after the take, without blocking: whatever was swapped in under the
        name since the first look is opened non-blocking and looked at before reading."""
        irregular = not_a_regular_file(path)
        if irregular is not None:
            raise Malformed(irregular)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise Malformed("not a regular file (it changed kind while being taken)")
            return handle.read()

    def _purge(self, queue):
        self._folder(self.data_folder_in)
        return super()._purge(queue)

    def _size(self, queue):
        self._folder(self.data_folder_in)
        return super()._size(queue)

    # --- exchange tables (control folder) -------------------------------------------------

    def get_table(self, exchange):
        """The exchange's bindings. A corrupt table is quarantined; a missing or empty one
        (its folder was removed) is written again from the bindings this process made, so
        a message is never routed to the dead-letter queue for want of a file."""
        self._folder(self.control_folder)
        self._quarantine_irregular_table(exchange)
        try:
            table = super().get_table(exchange)
        except (ValueError, TypeError) as exc:
            self.quarantine(self._exchange_file(exchange), f"exchange table is not JSON ({exc})")
            table = []
        if table:
            return table
        known = (self.state.exchanges.get(exchange) or {}).get("table") or []
        for meta in known:
            self._queue_bind(exchange, *meta)
        return [filesystem.exchange_queue_t(*meta) for meta in known]

    def _quarantine_irregular_table(self, exchange) -> None:
        """An exchange table that is not a regular file is moved aside unopened (it is
        written again from this process's bindings)."""
        file = self._exchange_file(exchange)
        irregular = not_a_regular_file(file)
        if irregular is not None:
            self.quarantine(file, f"exchange table is {irregular}")

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        self._folder(self.control_folder)
        self._quarantine_irregular_table(exchange)
        try:
            return super()._queue_bind(exchange, routing_key, pattern, queue)
        except (ValueError, TypeError) as exc:
            self.quarantine(self._exchange_file(exchange), f"exchange table is not JSON ({exc})")
            return super()._queue_bind(exchange, routing_key, pattern, queue)


class Transport(filesystem.Transport):
    """The filesystem transport with the channel above."""

    Channel = Channel
