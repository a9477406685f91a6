"""DEFINE: the names a text defines, with offsets and the sentence; nothing from the
parentheses and asides that only look like definitions."""

from __future__ import annotations

import pytest

from construction.definition_rules import best_long_form, initials_start
from construction.definitions import common_word, defined_before, definitions

FOUND = [
    (
        "The Transmission Control Protocol (TCP) provides reliable delivery.",
        "Transmission Control Protocol",
        "TCP",
        "long (short)",
    ),
    (
        "TCP (Transmission Control Protocol) provides reliable delivery.",
        "Transmission Control Protocol",
        "TCP",
        "short (long)",
    ),
    (
        "Hosts find each other through the Domain Name System (DNS).",
        "Domain Name System",
        "DNS",
        "long (short)",
    ),
    (
        "Hypertext Transfer Protocol Secure (HTTPS) encrypts every request.",
        "Hypertext Transfer Protocol Secure",
        "HTTPS",
        "long (short)",
    ),
    (
        "Internet Protocol version 4 (IPv4) uses 32-bit addresses.",
        "Internet Protocol version 4",
        "IPv4",
        "long (short)",
    ),
    (
        "Quality of Service (QoS) ranks traffic by class.",
        "Quality of Service",
        "QoS",
        "long (short)",
    ),
    (
        "The round-trip time (RTT) is measured by the sender.",
        "round-trip time",
        "RTT",
        "long (short)",
    ),
    ("Secure Sockets Layer (SSL) came before TLS.", "Secure Sockets Layer", "SSL", "long (short)"),
    (
        "Throughput is given in megabits per second (Mbps) here.",
        "megabits per second",
        "Mbps",
        "long (short)",
    ),
    ("## Address Resolution Protocol (ARP)", "Address Resolution Protocol", "ARP", "long (short)"),
    (
        "To send data, the User Datagram Protocol (UDP) needs no connection.",
        "User Datagram Protocol",
        "UDP",
        "long (short)",
    ),
    (
        "ARP (the Address Resolution Protocol) maps addresses.",
        "Address Resolution Protocol",
        "ARP",
        "short (long)",
    ),
    (
        "The Domain Name System, also called DNS, maps names to addresses.",
        "Domain Name System",
        "DNS",
        "also called",
    ),
    (
        "Ethernet, also known as IEEE 802.3, carries frames.",
        "Ethernet",
        "IEEE 802.3",
        "also known as",
    ),
    (
        "The Border Gateway Protocol (hereafter BGP) connects networks.",
        "Border Gateway Protocol",
        "BGP",
        "hereafter",
    ),
    (
        "The Border Gateway Protocol, hereafter BGP, connects networks.",
        "Border Gateway Protocol",
        "BGP",
        "hereafter",
    ),
    (
        "The Transmission Control Protocol, or TCP for short, is reliable.",
        "Transmission Control Protocol",
        "TCP",
        "for short",
    ),
    ("Each host runs a resolver (aka stub resolver).", "resolver", "stub resolver", "aka"),
    (
        "Each host runs a resolver, also called a stub resolver, that asks servers.",
        "resolver",
        "stub resolver",
        "also called",
    ),
    (
        "A Network Address Translator (also called a NAT box) rewrites addresses.",
        "Network Address Translator",
        "NAT box",
        "also called",
    ),
    ("The time to live, i.e. TTL, limits the hops of a packet.", "time to live", "TTL", "i.e."),
    ("Each packet carries a TTL, i.e. time to live, in its header.", "time to live", "TTL", "i.e."),
    (
        "The Dynamic Host Configuration Protocol (DHCP) hands out addresses.",
        "Dynamic Host Configuration Protocol",
        "DHCP",
        "long (short)",
    ),
    (
        "A virtual private network, a.k.a. VPN, tunnels traffic.",
        "virtual private network",
        "VPN",
        "aka",
    ),
]

NOTHING = [
    "This was standardised in 1981 (RFC 791).",  # a year, then a citation
    "The protocol was designed by Cerf and Kahn (1974).",  # a year
    "A delay of 30 ms (see below) is common.",  # a cross-reference
    "Transport protocols (TCP, UDP) carry data.",  # a list
    "Reliable protocols (e.g. TCP) resend lost data.",  # an example
    "Reliable protocols (for example TCP) resend lost data.",
    "The header is 20 bytes (160 bits) long.",  # a unit
    "The timeout is 200 (ms) by default.",  # a unit
    "TCP (see Section 4) is reliable.",
    "The server (Figure 3) answers the client.",
    "The answer (Smith et al., 2020) was disputed.",  # a citation
    "The sender (A) talks to the receiver (B).",  # single letters
    "A datagram, also called a packet, is sent.",  # a plain common word
    "Routers forward packets, also called datagrams, hop by hop.",  # a clause, not a name
    "Virtual private networks, a.k.a. VPNs, tunnel traffic.",  # lower case at the start: unsure
    "The payload, i.e. the data carried, is small.",  # i.e. explains, names nothing
    "Each TCP segment (i.e. a unit of data) has a header.",  # explains, no abbreviation
    "The port number (optional) follows a colon.",
    "Ports below 1024 (the well-known ports) need privileges.",
    "The protocol (TP) is simple.",  # "the protocol" is no long form of TP
    "HTTP (port 80) carries web pages.",
    "Use the tool (v2.1) to check.",
    "TCP (TCP) is TCP.",  # the same name twice
]


@pytest.mark.parametrize(("text", "name", "alias", "how"), FOUND)
def test_a_definition_is_found_with_both_names_their_offsets_and_the_sentence(
    text, name, alias, how
):
    """Each real phrasing gives the pair, where each name stands, and its sentence."""
    found = definitions(text)
    assert [(d.name, d.alias, d.how) for d in found] == [(name, alias, how)]
    item = found[0]
    assert text[item.name_at : item.name_at + len(name)] == name
    assert text[item.alias_at : item.alias_at + len(alias)] == alias
    assert item.quote == text[item.start : item.end]
    assert name in item.quote and alias in item.quote


@pytest.mark.parametrize("text", NOTHING)
def test_a_parenthesis_or_aside_that_names_nothing_defines_nothing(text):
    """Years, units, citations, lists, references, examples and clauses are no names."""
    assert definitions(text) == ()


def test_each_sentence_is_its_own_quote_and_offsets_point_into_the_whole_text():
    """In a longer text the quote is the defining sentence, offsets into the text."""
    text = (
        "# Transport\n\nData moves in segments. The Transmission Control Protocol (TCP) "
        "is reliable. Later the User Datagram Protocol (UDP) appears.\n"
    )
    found = definitions(text)
    assert [d.alias for d in found] == ["TCP", "UDP"]
    assert found[0].quote == "The Transmission Control Protocol (TCP) is reliable."
    assert text[found[1].start : found[1].end] == found[1].quote
    assert text[found[1].alias_at : found[1].alias_at + 3] == "UDP"


def test_the_names_defined_before_a_place_are_listed_once_in_order():
    """A chunk is told what the document defined up to its end, each pair once."""
    text = (
        "The Domain Name System (DNS) maps names. The Internet Protocol (IP) routes. "
        "Again, the Domain Name System (DNS) is a directory."
    )
    found = definitions(text)
    assert defined_before(found, len(text)) == [
        ("Domain Name System", "DNS"),
        ("Internet Protocol", "IP"),
    ]
    assert defined_before(found, 10) == [("Domain Name System", "DNS")]
    assert defined_before(found, 0) == []


def test_letters_in_order_right_to_left_with_the_first_starting_a_word():
    """The matching step of Schwartz and Hearst: where the long form starts, or None."""
    assert best_long_form("HTTPS", "the Hypertext Transfer Protocol Secure") == 4
    assert best_long_form("TCP", "a reliable protocol") is None
    assert best_long_form("TP", "the protocol") == 0
    assert initials_start("SSL", "the Secure Sockets Layer") == 4
    assert initials_start("QoS", "good Quality of Service") == 5
    assert initials_start("TCP", "a reliable protocol") is None


def test_a_plain_common_word_is_one_lowercase_word_english_uses_often():
    """ "packet" is common; "datagram", "TCP", "Ethernet" and two words are not."""
    assert common_word("packet")
    assert not common_word("datagram")
    assert not common_word("TCP")
    assert not common_word("Ethernet")
    assert not common_word("stub resolver")
