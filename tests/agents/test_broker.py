"""The embedded broker (kombu's filesystem transport, hardened) through kombu itself.

A malformed message file is quarantined with its reason and the next message is read; a
removed folder is made again on both sides; a message is never seen half-written.
"""

from __future__ import annotations

import base64
import json
import shutil
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
