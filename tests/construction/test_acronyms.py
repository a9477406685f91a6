"""An acronym is a name of its own: its key keeps its letters ("HTTPS" is no plural of
"HTTP"), and it never fuzzy-matches another one in the resolver, the ask loop's name
finding or the search box, while exact alias matches still work."""

from __future__ import annotations

from construction.ask.names import find_concepts
from construction.name_search import NameSearchIndex
from construction.resolve import OverlayIndex, resolve_name
from construction.text import acronym_clash, acronym_words, is_acronym, name_key
from construction.types import IndexEntry
from tests.construction.memory import index_of


def test_an_acronyms_capital_s_is_no_plural_but_a_small_s_is():
    """ "HTTPS", "QoS", "SaaS" keep their S; "APIs", "CPUs" and "Tokens" lose it."""
    assert name_key("HTTPS") == "https" != name_key("HTTP")
    assert name_key("QoS") == "qos"
    assert name_key("SaaS") == "saas"
    assert name_key("APIs") == name_key("API") == "api"
    assert name_key("CPUs") == "cpu"
    assert name_key("The Tokens") == "token"


def test_what_reads_as_an_acronym():
    """Two capitals at least, half the letters or more; the words of a name that are."""
    assert all(is_acronym(w) for w in ("TCP", "HTTPS", "IPv4", "QoS", "SaaS", "I/O"))
    assert not any(is_acronym(w) for w in ("Ethernet", "macOS", "802.11", "A", "Tcp"))
    assert acronym_words("HTTP/2 server") == {"http"}
    assert acronym_words("Transport Layer Security") == frozenset()


def test_names_clash_by_an_acronym_the_other_lacks_or_writes_otherwise():
    """ "http request" / "https request" and "ssl" / "tls" clash; a shared one does not."""
    acronym = {"http", "https", "ssl", "tls", "tcp"}.__contains__
    assert acronym_clash(["http", "request"], ["https", "request"], acronym)
    assert acronym_clash(["ssl", "handshake"], ["tls", "handshake"], acronym)
    assert not acronym_clash(["tcp", "handshke"], ["tcp", "handshake"], acronym)
    assert not acronym_clash(["handshake"], ["tcp", "handshake"], acronym)
    assert acronym_clash(["udp", "handshake"], ["tcp", "handshake"], {"tcp"}.__contains__)


def test_the_resolver_never_takes_one_acronym_for_another_but_finds_aliases_exactly():
    """HTTPS is new beside HTTP, "HTTPS requests" is not "HTTP request", IPv6 is not
    IPv4; "TCP" still finds the concept it is an alias of."""
    index = index_of(
        (1, "HTTP", []),
        (2, "HTTP request", []),
        (3, "IPv4 address", []),
        (4, "Transmission Control Protocol", ["TCP"]),
    )
    assert resolve_name("HTTPS", index).is_new
    assert resolve_name("HTTPS requests", index).is_new
    assert resolve_name("IPv6 address", index).is_new
    assert resolve_name("TCP", index).concept_id == 4
    assert resolve_name("requests HTTP", index).concept_id == 2  # a reordering still is one


def test_an_overlay_knows_the_acronyms_of_its_base_and_its_own_names():
    """A source's new "TLS handshake" is not the graph's "SSL handshake", nor the
    reverse, though the query is written in lower case."""
    overlay = OverlayIndex(index_of((1, "SSL handshake", [])))
    overlay.add(
        IndexEntry(name="TLS handshake", canonical="TLS handshake", key="n:tls handshake"),
        keys=["tls handshake"],
        names=["TLS handshake"],
    )
    assert overlay.fuzzy("handshake tls")[0].key == "n:tls handshake"
    assert overlay.fuzzy("ssl handshak") is not None
    assert overlay.fuzzy("ssl handshak")[0].concept_id == 1
    assert overlay.fuzzy("tsl handshake") is None


def test_the_ask_loop_reports_https_as_unknown_when_the_graph_has_only_http():
    """A question's "HTTPS" finds no concept rather than HTTP."""
    index = index_of((1, "Hypertext Transfer Protocol", ["HTTP"]))
    found, unknown = find_concepts("HTTPS", index)
    assert found == [] and unknown == ["HTTPS"]
    found, unknown = find_concepts("HTTP", index)
    assert [f.concept_id for _, f in found] == [1] and unknown == []


def test_the_search_box_offers_https_for_http_by_prefix_only():
    """Typing "http" lists "HTTPS" as a name it begins, never as a fuzzy likeness."""
    index = NameSearchIndex()
    index.extend([(1, "HTTPS", 10), (2, "HTTP", 11), (3, "SSL handshake", 12)])
    assert [index.name(i)[2] for i in index.prefixed("http", cap=5)] == [11, 10]
    assert [index.name(i)[2] for i, _ in index.fuzzy("https", limit=5)] == [10]
    assert [index.name(i)[2] for i, _ in index.fuzzy("tls handshake", limit=5)] == []
    assert [index.name(i)[2] for i, _ in index.fuzzy("ssl handshak", limit=5)] == [12]
