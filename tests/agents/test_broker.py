"""The embedded broker (kombu's filesystem transport, hardened) through kombu itself.

A malformed message file is quarantined with its reason and the next message is read; a
removed folder is made again on both sides; a message is never seen half-written; a FIFO,
a device or a folder under a message's name is quarantined unopened.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest
from kombu import Connection, Consumer, Exchange, Producer, Queue

from kgreview.agents.broker import Transport


def celery_queue() -> Queue:
    """The queue as Celery declares it (a new one per use: kombu binds it to a channel)."""
    return Queue("celery", Exchange("celery"), routing_key="celery")


@pytest.fixture
def folders(tmp_path) -> dict[str, Path]:
    names = ("queue", "processed", "control", "quarantine")
    made = {name: tmp_path / "broker" / name for name in names}
    for folder in made.values():
        folder.mkdir(parents=True)
    return made


@pytest.fixture
def conn(folders):
    options = {
        "data_folder_in": str(folders["queue"]),
        "data_folder_out": str(folders["queue"]),
        "processed_folder": str(folders["processed"]),
        "control_folder": str(folders["control"]),
        "quarantine_folder": str(folders["quarantine"]),
    }
    with Connection("filesystem://", transport=Transport, transport_options=options) as c:
        yield c


def publish(conn, body: dict) -> None:
    queue = celery_queue()
    Producer(conn.default_channel).publish(
        body, exchange=queue.exchange, routing_key="celery", declare=[queue], serializer="json"
    )


def drain(conn, *, most: int = 10) -> list[dict]:
    got: list[dict] = []

    def take(body, message):
        got.append(body)
        message.ack()

    with Consumer(conn, [celery_queue()], callbacks=[take], accept=["json"]):
        for _ in range(most):
            try:
                conn.drain_events(timeout=0.5)
            except TimeoutError:
                break
    return got


def drop(folders, name: str, content: bytes) -> Path:
    path = folders["queue"] / f"{name}.celery.msg"
    path.write_bytes(content)
    return path


def envelope(body: bytes, **extra) -> bytes:
    message = {
        "body": base64.b64encode(body).decode(),
        "content-type": "application/json",
        "content-encoding": "utf-8",
        "headers": {},
        "properties": {
            "body_encoding": "base64",
            "delivery_tag": "tag-1",
            "delivery_info": {"exchange": "celery", "routing_key": "celery"},
        },
    }
    message.update(extra)
    return json.dumps(message).encode()


BAD = {
    "not JSON": b"{not json",
    "empty": b"",
    "not UTF-8": b"\xff\xfe\x00",
    "a JSON list": b"[1, 2]",
    "no properties": b'{"body": "e30="}',
    "a body that is not JSON": envelope(b"{oops"),
    "a body in another serializer": envelope(b"\x80\x04K\x01.", **{"content-type": "pickle"}),
}


@pytest.mark.parametrize("what", list(BAD))
def test_a_malformed_message_is_quarantined_with_its_reason_and_the_next_is_read(
    conn, folders, what
):
    publish(conn, {"n": 1})
    drop(folders, "0000001_bad", BAD[what])  # sorts first: read before the good one
    assert drain(conn) == [{"n": 1}]
    assert not list(folders["queue"].iterdir())
    kept = folders["quarantine"] / "0000001_bad.celery.msg"
    assert kept.read_bytes() == BAD[what]
    reason = (folders["quarantine"] / "0000001_bad.celery.msg.reason.txt").read_text()
    assert "quarantined" in reason and len(reason.strip()) > 20


def test_a_quarantined_file_is_logged_in_words(conn, folders, caplog):
    drop(folders, "0000001_bad", b"{not json")
    assert drain(conn) == []
    assert any(
        "quarantined the message file 0000001_bad.celery.msg: not JSON" in r.getMessage()
        for r in caplog.records
    )


def test_two_bad_files_with_one_name_are_both_kept(conn, folders):
    drop(folders, "0000001_bad", b"first")
    drain(conn)
    drop(folders, "0000001_bad", b"second")
    drain(conn)
    kept = sorted(p.read_bytes() for p in folders["quarantine"].glob("*.msg"))
    assert kept == [b"first", b"second"]


def test_a_removed_queue_folder_is_made_again_by_the_producer(conn, folders):
    shutil.rmtree(folders["queue"])
    publish(conn, {"n": 2})
    assert folders["queue"].is_dir()
    assert drain(conn) == [{"n": 2}]


def test_a_removed_queue_folder_is_made_again_by_the_consumer(conn, folders):
    publish(conn, {"n": 1})
    assert drain(conn) == [{"n": 1}]
    shutil.rmtree(folders["queue"].parent)  # the whole broker folder, quarantine included
    assert drain(conn) == []
    assert folders["queue"].is_dir()
    drop(folders, "0000001_bad", b"{not json")
    drain(conn)
    assert (folders["quarantine"] / "0000001_bad.celery.msg").exists()


def test_a_half_written_message_is_never_read(conn, folders):
    """A producer writes under a name readers skip and renames it into place."""
    (folders["queue"]).mkdir(parents=True, exist_ok=True)
    partial = folders["queue"] / "0000001_x.celery.msg.part"
    partial.write_bytes(b'{"body": "trunc')
    assert drain(conn) == []
    assert partial.exists() and not list(folders["quarantine"].glob("*"))


def test_a_corrupt_exchange_table_is_quarantined_and_written_again(conn, folders):
    publish(conn, {"n": 1})
    table = folders["control"] / "celery.exchange"
    table.write_text('[["celery", "", "celery"]]garbage')
    publish(conn, {"n": 2})
    assert (folders["quarantine"] / "celery.exchange").exists()
    assert json.loads(table.read_text()) == [["celery", "", "celery"]]
    assert drain(conn) == [{"n": 1}, {"n": 2}]


def test_a_removed_control_folder_is_written_again_and_messages_still_arrive(conn, folders):
    publish(conn, {"n": 1})
    shutil.rmtree(folders["control"])
    publish(conn, {"n": 2})
    assert (folders["control"] / "celery.exchange").exists()
    assert drain(conn) == [{"n": 1}, {"n": 2}]


def in_thread(conn, work):
    """``work()`` in a thread the test gives up on if it never returns: a reader that
    opens a FIFO waits for a writer forever, and the test must fail, not hang."""
    got: list = []
    worker = threading.Thread(target=lambda: got.append(work()), daemon=True)
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():
        # Open every FIFO for writing so the stuck open() returns, then fail in words.
        root = Path(conn.transport_options["data_folder_in"]).parent
        for path in root.rglob("*"):
            if stat.S_ISFIFO(os.lstat(path).st_mode):
                with contextlib.suppress(OSError):
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=5)
        pytest.fail("the broker blocked on a file that is not a regular file")
    return got[0]


def drain_in_thread(conn) -> list[dict]:
    return in_thread(conn, lambda: drain(conn))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_the_queue_is_quarantined_unopened_and_the_next_message_is_read(conn, folders):
    publish(conn, {"n": 1})
    fifo = folders["queue"] / "0000001_fifo.celery.msg"  # sorts first: met before the good one
    os.mkfifo(fifo)
    assert drain_in_thread(conn) == [{"n": 1}]
    kept = folders["quarantine"] / "0000001_fifo.celery.msg"
    assert stat.S_ISFIFO(os.lstat(kept).st_mode)
    reason = (folders["quarantine"] / "0000001_fifo.celery.msg.reason.txt").read_text()
    assert "not a regular file (a FIFO)" in reason
    assert not list(folders["queue"].iterdir())


@pytest.mark.parametrize("what", ["a folder", "a symlink to a FIFO"])
def test_anything_else_that_is_not_a_regular_file_is_quarantined_with_a_note(
    conn, folders, tmp_path, what
):
    publish(conn, {"n": 1})
    odd = folders["queue"] / "0000001_odd.celery.msg"
    if what == "a folder":
        odd.mkdir()
    else:
        os.mkfifo(tmp_path / "elsewhere")
        odd.symlink_to(tmp_path / "elsewhere")
    assert drain_in_thread(conn) == [{"n": 1}]
    reason = (folders["quarantine"] / "0000001_odd.celery.msg.reason.txt").read_text()
    assert "not a regular file" in reason and "it was not opened" in reason


def test_a_symlink_to_a_real_message_is_still_read(conn, folders, tmp_path):
    real = tmp_path / "real.msg"
    publish(conn, {"n": 1})
    (written,) = folders["queue"].iterdir()
    written.rename(real)
    (folders["queue"] / written.name).symlink_to(real)
    assert drain_in_thread(conn) == [{"n": 1}]
    assert not list(folders["quarantine"].glob("*"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_place_of_the_exchange_table_is_moved_aside_and_the_table_written_again(
    conn, folders
):
    publish(conn, {"n": 1})
    table = folders["control"] / "celery.exchange"
    table.unlink()
    os.mkfifo(table)
    # Routing reads the table: a FIFO there blocked the producer.
    in_thread(conn, lambda: publish(conn, {"n": 2}))
    assert stat.S_ISFIFO(os.lstat(folders["quarantine"] / "celery.exchange").st_mode)
    assert json.loads(table.read_text()) == [["celery", "", "celery"]]
    assert drain_in_thread(conn) == [{"n": 1}, {"n": 2}]
