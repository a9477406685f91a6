"""Relations read from the dependency parse: a cue (``cues``) and the two terms it governs,
plus a few constructions of their own ("unlike X, Y ...", "X is a Y" as a definition).

The two sides are the cue's grammatical subject and object (the agent of a passive,
the object of its preposition), through coordination ("A and B require C"), relative
clauses ("X, which requires Y") and participles ("the lock required by X"). Both must be
terms (``terms.TermTable``), else the cue yields nothing. A cue that is negated ("does
not require", "requires no"), sits in a conditional or temporal clause ("if the server
requires password authentication ...", "when X runs ..."), or in a question, yields
nothing; a modal ("can use", "may require") lowers the confidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .cues import CONTRAST_WORDS, Cue
from .words import STANDS_FOR_OF, words_of

SUBJECTS = frozenset({"nsubj", "csubj"})
PASSIVE_SUBJECTS = frozenset({"nsubjpass", "csubjpass"})
CONDITIONAL_MARKS = frozenset(
    {"if", "unless", "whether", "when", "whenever", "once", "until", "while", "before", "after"}
)
HEDGES = {"can": 0.05, "should": 0.05, "would": 0.1}
# Modals and adverbs of possibility: "the document may contain errors", "will probably
# contain whitespace" state no composition.
POSSIBILITY = frozenset({"may", "might", "could", "probably", "possibly", "perhaps", "maybe"})
# Adverbs of frequency: "is usually a comma" defines nothing.
FREQUENCY = frozenset({"usually", "often", "typically", "normally", "generally", "sometimes"})
# Verbs whose complement is not asserted: "attempts to determine", "allow an FDW to use".
UNASSERTED = frozenset(
    {"attempt", "try", "want", "wish", "allow", "let", "permit", "enable", "need", "have"}
)
NEGATIONS = frozenset({"not", "n't", "never", "no", "neither", "nor", "without"})


@dataclass(frozen=True)
class Found:
    """A relation stated in one sentence: the head tokens of both sides."""

    relation: str
    source: int
    target: int
    cue: int  # the cue's token
    confidence: float


def find_relations(
    doc, table: dict[str, list[Cue]], *, contrast: bool, is_a: bool
) -> Iterator[Found]:
    """Every relation a parsed sentence states between two of its nouns."""
    if doc.text.rstrip().endswith("?"):
        return
    quoted = _quoted_spans(doc.text)
    for tok in doc:
        cues = table.get(tok.lemma_.lower(), ())
        if cues and not _mentioned(tok, quoted):
            for cue in cues:
                yield from _match(tok, cue)
    if contrast:
        yield from _contrasts(doc)
    if is_a:
        yield from _definitions(doc)


QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"")


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in QUOTED.finditer(text)]


def _mentioned(tok, quoted: list[tuple[int, int]]) -> bool:
    """A cue word the sentence only mentions: inside quotation marks ("the paper
    “Testing Remote Servers Using Python”") or capitalised mid-sentence as in a title
    ("see HOWTO Fetch Internet Resources Using The urllib Package")."""
    if any(start < tok.idx < end for start, end in quoted):
        return True
    if tok.i == 0 or not tok.text[:1].isupper() or tok.text.isupper():
        return False
    return tok.doc[tok.i - 1].text not in (".", ":", ";", "!", "?", "(", "[", "—", "-", "–")


def _match(tok, cue: Cue) -> Iterator[Found]:
    if cue.kind == "verb":
        if tok.pos_ not in ("VERB", "AUX") and tok.tag_ not in ("VBN", "VBG"):
            return
        pairs = _verb_sides(tok, cue)
        anchor = tok
    else:
        if not _word_fits(tok, cue):
            return
        pairs = _copula_sides(tok, cue)
        anchor = tok.head if tok.dep_ in ("attr", "acomp") else tok
    if pairs is None:
        return
    subjects, objects = pairs
    if not subjects or not objects or is_negated(tok, anchor, objects) or _conditional(anchor):
        return
    if any(c.dep_ in ("aux", "advmod") and c.lower_ in POSSIBILITY for c in anchor.children):
        return
    if _unasserted(anchor):
        return
    if cue.inverse and cue.relation == "part_of" and _modal(anchor):
        return  # "a query can contain window functions": possible parts, not the parts
    confidence = cue.confidence - _hedge(anchor)
    for s in subjects:
        for o in objects:
            if s.i == o.i:
                continue
            source, target = (o, s) if cue.inverse else (s, o)
            yield Found(cue.relation, source.i, target.i, tok.i, round(confidence, 3))


def _word_fits(tok, cue: Cue) -> bool:
    """Whether a noun or adjective cue's word stands as the cue needs."""
    if cue.kind == "noun" and tok.pos_ not in ("NOUN", "PROPN"):
        return False
    if cue.kind == "adj" and tok.pos_ not in ("ADJ", "VERB") and tok.tag_ != "VBN":
        return False
    if cue.lemma in ("kind", "type", "form", "sort") and any(
        c.dep_ in ("det", "poss") and c.lower_ not in ("a", "an", "another", "one")
        for c in tok.children
    ):
        return False  # "X is the type of Y" names Y's type; "a type of Y" classifies X
    if cue.kind == "noun" and " " in cue.lemma:
        before = cue.lemma.split()[:-1]
        words = [t.lemma_.lower() for t in tok.lefts][-len(before) :]
        if words != before:
            return False
    return True


def _verb_sides(verb, cue: Cue) -> tuple[list, list] | None:
    passive = any(c.dep_ in PASSIVE_SUBJECTS | {"auxpass"} for c in verb.children)
    if verb.tag_ == "VBG" and not any(c.dep_ in SUBJECTS for c in verb.children):
        return None  # "can be read using this module": whose use is not said
    if verb.dep_ == "acl" and verb.tag_ == "VBN":
        passive = True  # "the lock required by VACUUM"
    if cue.passive is not None and passive != cue.passive:
        return None
    if cue.prep and not passive:
        objects = prep_objects(verb, cue.prep)
        subjects = subjects_of(verb)
    elif cue.prep and passive:
        # "X is based on Y", "X is used for Y": the passive subject is the source.
        objects = prep_objects(verb, cue.prep)
        subjects = _passive_subjects(verb)
    elif passive:
        # "Y is required by X": the agent is the source.
        subjects = [
            o for p in verb.children if p.dep_ == "agent" for o in conjoined(object_of_prep(p))
        ]
        objects = _passive_subjects(verb)
    else:
        objects = [o for c in verb.children if c.dep_ == "dobj" for o in conjoined(c)]
        subjects = subjects_of(verb)
    return subjects, objects


def _copula_sides(word, cue: Cue) -> tuple[list, list] | None:
    """ "X is (a) part of Y", "X is related to Y": the subject of "be" (or of the
    participle, when the parser made it the verb), the object of the cue's preposition."""
    objects = prep_objects(word, cue.prep) if cue.prep else []
    own = cue.kind == "adj" and any(c.dep_ in PASSIVE_SUBJECTS for c in word.children)
    if word.dep_ in ("attr", "acomp") and not own:
        head = word.head
        if head.lemma_ not in ("be", "become", "remain", "seem"):
            return None
        return subjects_of(head), objects
    if cue.kind == "adj" and any(c.dep_ in PASSIVE_SUBJECTS | {"auxpass"} for c in word.children):
        # "... which is why guardrails are connected to X": the participle's own subject
        return _passive_subjects(word), objects
    if cue.kind == "adj" and word.dep_ in ("amod", "acl") and word.head.pos_ in ("NOUN", "PROPN"):
        return conjoined(word.head), objects  # "concepts related to X"
    return None


class Slot:
    """A side the sentence does not name but its place does: the label or heading it
    describes (``LABEL``), or what the sentence before was about (``PREVIOUS``)."""

    children: tuple = ()
    lower_ = ""
    pos_ = "NOUN"

    def __init__(self, i: int) -> None:
        self.i = i


LABEL = -2  # "`wal_level` (enum)" / "Controls how much ...": the label's term
PREVIOUS = -3  # "It also controls ...": the previous sentence's subject
PRONOUNS = frozenset({"it", "they", "this", "these"})
THIS = frozenset({"this", "these"})
# Nouns that, after "this", point at the thing a label or heading names.
POINTING_HEADS = frozenset(
    words_of(
        """
    parameter setting option command function variable field column file directory
    key flag statement clause keyword mode method class module package type view
    catalog program utility tool operator macro extension library script process
    procedure routine feature value index table
    """
    )
)


def subjects_of(verb) -> list:
    found = [_resolve(s) for c in verb.children if c.dep_ in SUBJECTS for s in conjoined(c)]
    if not found and verb.dep_ == "ROOT" and verb.tag_ == "VBZ":
        return [Slot(LABEL)]  # "Specifies how much ...", under a label naming the setting
    if not found and verb.dep_ == "relcl" and not _infinitive(verb):
        found = conjoined(verb.head)  # "X, which requires Y"; not "a superuser to use Y"
    if not found and verb.dep_ == "conj":
        if verb.tag_ == "VB" and verb.head.tag_ in ("VBZ", "VBP", "VBD"):
            return []  # "X is ..., and in another window, use Y": an imperative
        return subjects_of(verb.head)  # "X reads A and requires B"
    if not found and verb.dep_ in ("xcomp",) and verb.head.pos_ in ("VERB", "AUX"):
        return subjects_of(verb.head)  # "X is designed to use Y"
    return found


def _infinitive(verb) -> bool:
    """ "to use": a purpose or a duty ("you must be a superuser to use X"), not what the
    noun it hangs on does."""
    return any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children)


def _resolve(tok):
    """A subject that only points ("it", "this parameter"): the slot it points at."""
    if tok.lower_ in PRONOUNS and tok.pos_ == "PRON":
        if _expletive(tok):
            return tok
        # Only a sentence's main clause points back at the sentence before; "X is called
        # Y, and it ..." points inside its own sentence.
        return Slot(PREVIOUS) if tok.head.dep_ == "ROOT" else tok
    if tok.lemma_.lower() in POINTING_HEADS and any(
        c.dep_ == "det" and c.lower_ in THIS for c in tok.children
    ):
        return Slot(LABEL)
    return tok


def _expletive(tok) -> bool:
    """ "It is possible to use X", "it is important that ...": an "it" that stands for the
    clause after it, not for anything named before."""
    if tok.lower_ != "it":
        return False
    head = tok.head
    said = any(c.dep_ in ("acomp", "attr") for c in head.children)
    return said and any(c.dep_ in ("xcomp", "ccomp") for c in head.children)


def _passive_subjects(verb) -> list:
    found = [_resolve(s) for c in verb.children if c.dep_ in PASSIVE_SUBJECTS for s in conjoined(c)]
    if not found and verb.dep_ in ("acl", "relcl"):
        noun = verb.head
        if noun.dep_ == "attr" and noun.head.lemma_ == "be" and noun.lemma_.lower() in CARRIERS:
            return subjects_of(noun.head)  # "X is the pattern used for Y": X is used for Y
        found = conjoined(noun)
    if not found and verb.dep_ == "conj":
        return _passive_subjects(verb.head)
    return found


# Nouns that only carry a description after "be": "X is the pattern used for Y" says
# what X is used for.
CARRIERS = frozenset(
    words_of(
        """
        pattern technique method approach way tool mechanism algorithm strategy
        practice option choice solution means
        """
    )
)


def prep_objects(word, prep: str) -> list:
    """The objects of the word's preposition ``prep``; through a gerund, its objects
    ("useful for serving large models")."""
    out = []
    for child in word.children:
        if child.dep_ in ("prep", "agent") and child.lower_ == prep:
            pobj = object_of_prep(child)
            if pobj is not None and pobj.lower_ == "top":  # "built on top of X"
                of = next((c for c in pobj.children if c.dep_ == "prep" and c.lower_ == "of"), None)
                pobj = object_of_prep(of) if of is not None else None
            if pobj is not None:
                out += conjoined(pobj)
            for gerund in (c for c in child.children if c.dep_ == "pcomp" and c.tag_ == "VBG"):
                out += [o for c in gerund.children if c.dep_ == "dobj" for o in conjoined(c)]
    return out


def object_of_prep(prep):
    return next((c for c in prep.children if c.dep_ == "pobj"), None)


# A noun that only counts what follows it: "two phases, prefill and decode".
LIST_HEADS = frozenset(
    words_of(
        """
        part phase stage component term step piece element kind type thing
        """
    )
)


def conjoined(tok) -> list:
    """The token and the tokens coordinated with it ("A, B and C"); a counting noun
    stands for the list in apposition to it ("two phases, prefill and decode")."""
    if tok is None:
        return []
    if tok.lemma_.lower() in LIST_HEADS:
        listed = [c for c in tok.children if c.dep_ == "appos"]
        if not listed and any(c.dep_ == "nummod" for c in tok.children):
            listed = [c for c in tok.children if c.dep_ == "conj"]  # "two phases, A and B"
        if listed:
            return [t for c in listed for t in conjoined(c)]
    if tok.lemma_.lower() in STANDS_FOR_OF:
        named = [
            o
            for c in tok.children
            if c.dep_ == "prep" and c.lower_ == "of"
            for o in [object_of_prep(c)]
            if o is not None
        ]
        if named:  # "builds on the idea of a proximity graph": the proximity graph
            return conjoined(named[0])
    out = [tok]
    for child in tok.children:
        if child.dep_ == "conj":
            out += conjoined(child)
    return out


def is_negated(tok, anchor, objects: Iterable) -> bool:
    for word in {tok, anchor}:
        if any(c.dep_ == "neg" or c.lower_ in NEGATIONS for c in word.children):
            return True
    return any(
        c.dep_ == "det" and c.lower_ in ("no", "neither") for o in objects for c in o.children
    )


# Verbs whose clause is imagined or reported, not stated: "pretend that X is a Y".
SUPPOSING = frozenset(
    {"pretend", "suppose", "imagine", "say", "think", "guess", "assume", "seem", "appear"}
)
# What a phrase in front of the clause may restrict it to: "On other platforms, ...",
# "In this case, ...", "In other contexts, ..." state the relation only there.
RESTRICTING = frozenset(
    words_of(
        """
        platform platforms system systems case cases context contexts situation
        situations circumstance circumstances mode modes configuration configurations
        environment environments setup setups installation installations machine
        machines architecture architectures version versions
        """
    )
)


def _unasserted(verb) -> bool:
    """A clause the sentence does not assert: the complement of "attempt to", "allow X
    to", "pretend that"."""
    governor = verb.head.lemma_.lower()
    if verb.dep_ == "xcomp" and governor in UNASSERTED:
        return True
    return verb.dep_ in ("ccomp", "xcomp") and governor in SUPPOSING


def _modal(verb) -> bool:
    return any(c.dep_ == "aux" and c.tag_ == "MD" for c in verb.children)


def _conditional(tok) -> bool:
    """Inside an if-, when- or whether-clause, or any clause that only sets a condition,
    or the main clause of a sentence that has one ("If no option is given, initdb ...")."""
    node = tok
    for _ in range(12):
        if any(c.dep_ == "mark" and c.lower_ in CONDITIONAL_MARKS for c in node.children):
            return True
        if any(_restricts(c) for c in node.children if c.i < node.i):
            return True
        for clause in (c for c in node.children if c.dep_ == "advcl"):
            if any(m.dep_ == "mark" and m.lower_ in ("if", "unless") for m in clause.children):
                return True
            if (  # "When this namespace is specified, X is a Y"; not "When executing ..."
                clause.i < node.i
                and any(c.dep_ in ("nsubj", "nsubjpass") for c in clause.children)
                and any(
                    m.dep_ in ("mark", "advmod") and m.lower_ in ("when", "whenever", "once")
                    for m in clause.children
                )
            ):
                return True
        clause = node.dep_ in ("advcl", "csubj") and node.head is not node
        if clause and any(c.dep_ in ("mark", "advmod") for c in node.children):
            return True
        if node.head is node:
            return False
        node = node.head
    return False


def _restricts(prep) -> bool:
    """A phrase in front of a clause that restricts it: "On other platforms", "In this
    case", "On Emscripten" (a platform's name after "on")."""
    if prep.dep_ != "prep" or prep.lower_ not in ("on", "in", "under"):
        return False
    for obj in prep.children:
        if obj.dep_ != "pobj":
            continue
        if obj.lemma_.lower() in RESTRICTING or obj.lower_ in RESTRICTING:
            return True
        if prep.lower_ == "on" and obj.pos_ == "PROPN":
            return True
    return False


def _hedge(verb) -> float:
    return max((HEDGES.get(c.lower_, 0.0) for c in verb.children if c.dep_ == "aux"), default=0.0)


def _contrasts(doc) -> Iterator[Found]:
    """ "Unlike X, Y ...", "In contrast to X, Y ...", "Compared with X, Y ...": X and
    the subject of the clause the phrase belongs to."""
    for tok in doc:
        low = tok.lower_
        if low not in CONTRAST_WORDS:
            continue
        if low == "unlike" and tok.dep_ == "prep":
            other = object_of_prep(tok)
            clause = tok.head
        elif low == "contrast" and tok.head.lower_ == "in":
            inner = next((c for c in tok.children if c.lower_ == "to"), None)
            other = object_of_prep(inner) if inner is not None else None
            clause = tok.head.head
        elif low == "whereas" and tok.dep_ == "mark":
            # "Whereas A matches terms, B compares meaning": A against B.
            inner = tok.head
            other = next(iter(subjects_of(inner)), None)
            clause = inner.head if inner.dep_ == "advcl" else None
            if clause is None or other is None or isinstance(other, Slot):
                continue
            for subject in subjects_of(clause):
                if not isinstance(subject, Slot):
                    yield Found("contrasts_with", subject.i, other.i, tok.i, 0.7)
            continue
        elif low in ("compared", "compare") and tok.tag_ == "VBN":
            inner = next((c for c in tok.children if c.lower_ in ("with", "to")), None)
            other = object_of_prep(inner) if inner is not None else None
            clause = tok.head
        else:
            continue
        if other is None or _conditional(clause):
            continue
        for subject in subjects_of(clause) or _passive_subjects(clause):
            for x in conjoined(other):
                yield Found("contrasts_with", subject.i, x.i, tok.i, 0.7)


def _definitions(doc) -> Iterator[Found]:
    """ "A B-tree is a balanced tree that ...": the subject is a kind of the predicate
    noun, when the predicate is indefinite and nothing but "be" joins them."""
    for tok in doc:
        if tok.dep_ != "attr" or tok.head.lemma_ != "be" or tok.pos_ not in ("NOUN", "PROPN"):
            continue
        if not any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in tok.children):
            continue
        if any(c.dep_ == "prep" and c.lower_ == "of" for c in tok.children):
            continue  # "a part of", "a kind of": the noun cues read those
        if tok.lemma_.lower() in ("alias", "synonym"):
            continue  # "X is an alias for Y" names Y again; it is no kind of alias
        head = tok.head
        if is_negated(head, head, [tok]) or _conditional(head) or _modal(head):
            continue
        if any(c.lower_ in FREQUENCY | POSSIBILITY for c in head.children):
            continue
        if _unasserted(head):
            continue
        for subject in [_resolve(c) for c in head.children if c.dep_ == "nsubj"]:
            if any(c.dep_ == "prep" and c.lower_ == "of" for c in subject.children):
                continue  # "the central component of X is a Y" says what Y is in X
            yield Found("is_a", subject.i, tok.i, head.i, 0.6)
