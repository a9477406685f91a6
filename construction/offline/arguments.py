"""The sides of a cue: which concepts stand before and after it in a sentence.

``ArgumentFinder`` is the reader's second layer, over ``DocumentNames``. Left of a cue it
looks for the clause's subject past asides and relative clauses; right of it, the first
concept past "the idea of" and generic heads, then any coordinated ones ("A, B and C").
"it" and "this lesson" point back at a subject or the topic. Where no known concept
stands, a run of content words is guessed as a new name, with a penalty.
"""

from __future__ import annotations

from ..text import ARTICLES, name_key, singular
from .lexicon import (
    ANAPHORIC,
    ASIDE_STARTS,
    BEFORE_CUE,
    CLAUSE_VERBS,
    CLAUSE_WORDS,
    CONTAINERS,
    DETERMINERS,
    LESSON_WORDS,
    PERSONAL,
    PREPOSITIONS,
    QUANTITIES,
    RIGHT_STOPS,
    SUBORDINATORS,
)
from .names import DocumentNames
from .tokens import (
    Arg,
    Run,
    Sent,
    content_runs,
    display_name,
    is_activity,
    is_generic,
    is_gerund,
    is_participle,
    verb_after,
)


class ArgumentFinder(DocumentNames):
    """Finds the concepts on either side of a cue (the reader's second layer)."""

    def resolve(self, s: Sent, run: Run, *, head: bool = False) -> Arg | None:
        """The concept a run names: its last mention (past generic heads), else a guess."""
        if run.lo and s.toks[run.lo - 1].low in ANAPHORIC and s.soft[run.lo]:
            return None  # "these metrics" points back at something; it names nothing new
        parts = list(run.parts)
        lo_char, hi_char = s.toks[run.lo].start, s.toks[run.hi - 1].end
        if head and parts[0][2]:
            return Arg(parts[0][2], lo_char, hi_char)  # "QLoRA brings quantization ..."
        core = parts[:]
        while len(core) > 1 and core[-1][2] is None and is_generic(s.toks[core[-1][0]].low):
            core.pop()
        if core[-1][2]:
            return Arg(core[-1][2], lo_char, hi_char)
        toks = list(s.toks[run.lo : run.hi])
        if head:
            following = [t.low for t in toks[1:]] + [
                s.toks[run.hi].low if run.hi < len(s.toks) else ""
            ]
            cut = next(
                (k for k in range(1, len(toks)) if verb_after(toks[k - 1], toks[k], following[k])),
                None,
            )
            toks = toks[:cut] if cut else toks
        after_preposition = run.lo > 0 and s.toks[run.lo - 1].low in PREPOSITIONS
        if len(toks) > 1 and after_preposition and is_gerund(toks[0]):
            toks = toks[1:]  # "a prerequisite for building AI agents"
        while len(toks) > 1 and is_participle(toks[-1].low):
            toks = toks[:-1]  # "the KV cache used during decoding"
        toks = toks[-5:]
        if (
            all(is_generic(t.low) or t.func for t in toks)
            or is_participle(toks[-1].low)
            or toks[-1].low in LESSON_WORDS
        ):
            return None
        name = display_name(self.text[toks[0].start : toks[-1].end])
        cid = self.lookup(name_key(name)) or self.register(name, 0)
        return Arg(cid, toks[0].start, toks[-1].end, penalty=0.1) if cid else None

    def usable(self, s: Sent, run: Run, hi: int) -> bool:
        """Not "the idea of", not only generic words."""
        return not self.container(s, run, hi) and not self.generic_run(s, run)

    @staticmethod
    def container(s: Sent, run: Run, hi: int) -> bool:
        """ "the idea of X", "a solid grasp of X": the concept is X, not the run."""
        last = s.toks[run.hi - 1].low
        followed_by_of = run.hi < hi and s.toks[run.hi].low == "of" and s.soft[run.hi]
        return followed_by_of and (singular(last) in CONTAINERS or last in CONTAINERS)

    @staticmethod
    def generic_run(s: Sent, run: Run) -> bool:
        return all(p[2] is None and is_generic(s.toks[p[0]].low) for p in run.parts)

    def in_pp(self, s: Sent, run: Run, floor: int) -> bool:
        """A run right after a preposition is an object, rarely the subject we want."""
        k = run.lo - 1
        if k < floor or not s.soft[run.lo]:
            return False
        while k >= floor and s.toks[k].low in DETERMINERS and s.soft[k + 1]:
            k -= 1
        if k < floor or s.toks[k].low not in PREPOSITIONS:
            return False
        if s.toks[k].low == "of" and k > floor:
            before = s.toks[k - 1].low
            return not (singular(before) in CONTAINERS or before in CONTAINERS)
        return True

    def segment_end(self, s: Sent, lo: int, hi: int) -> int:
        """Where the phrase starting at ``lo`` ends: punctuation, a clause word, another cue."""
        for k in range(lo, hi):
            if k > lo and (not s.soft[k] or k in s.blocked or s.toks[k].low in PERSONAL):
                return k
            if s.toks[k].low in RIGHT_STOPS:
                return k
        return hi

    def pick_right(self, s: Sent, lo: int, hi: int | None = None) -> list[Arg]:
        """The first concept after a cue, then any coordinated ones ("A, B and C")."""
        hi = len(s.toks) if hi is None else hi
        if lo >= hi:
            return []
        pointed = self.pronoun(s, lo, hi)
        if pointed is not None:
            return pointed
        end = self.segment_end(s, lo, hi)
        runs = content_runs(s, lo, end)
        listed = self.colon_list(s, runs, end, hi)
        if listed is not None:
            return listed
        usable = []
        for run in runs:
            if self.container(s, run, end):
                continue
            if self.generic_run(s, run):
                break  # "the same tools as ...": a generic word, and nothing after it counts
            usable.append(run)
        runs = usable
        chosen = None
        for n, run in enumerate(runs):
            if run.lo - lo > 6:
                break
            if n and self.in_pp(s, run, lo):
                continue  # "applied to the projection matrices for queries": not queries
            arg = self.resolve(s, run)
            if arg and not arg.penalty:
                chosen = (run, arg)
                break
        if chosen is None and runs:
            arg = self.resolve(s, runs[0])
            chosen = (runs[0], arg) if arg else None
        if chosen is None:
            return []
        joined = self.coordinated(s, chosen[0].hi, hi)
        return [chosen[1], *(joined or self.as_well_as(s, chosen[0].hi, hi))]

    def coordinated(self, s: Sent, k: int, hi: int) -> list[Arg]:
        """Arguments joined to the one ending at token ``k``: "A, B and C", "A as well as B"."""
        out: list[Arg] = []
        listed: list[Arg] = []  # joined by commas only; kept once "and" closes the list
        while k < hi:
            comma = s.comma[k]
            if not s.soft[k] and not comma:
                break
            j, conj = k, False
            if s.toks[j].low in ("and", "or"):
                conj, j = True, j + 1
            elif [t.low for t in s.toks[j : j + 3]] == ["as", "well", "as"]:
                conj, j = True, j + 3
            if not (conj or comma):
                break
            while j < hi and s.toks[j].low in ("a", "an", "the", "also", "both"):
                j += 1
            runs = content_runs(s, j, self.segment_end(s, j, hi))
            if not runs or runs[0].lo != j:
                break
            if not self.usable(s, runs[0], hi) and len(runs) > 1:
                runs = runs[1:]  # "the general principles of LLM evaluation"
            first = s.toks[runs[0].lo]
            if not s.mentions.get(runs[0].lo) and (is_gerund(first) or is_participle(first.low)):
                break  # ", trading higher cost ..." is a new clause, not a list item
            after = runs[0].hi
            if after < hi and (s.toks[after].low in CLAUSE_VERBS or after in s.blocked):
                break  # ", and an unfaithful answer is ..." starts a new clause
            arg = self.resolve(s, runs[0])
            if arg is None:
                break
            arg = Arg(arg.cid, arg.lo, arg.hi, arg.penalty + 0.03)
            if conj:
                out.extend(listed)
                listed = []
                out.append(arg)
            else:
                listed.append(arg)
            k = after
        return out

    def as_well_as(self, s: Sent, k: int, hi: int) -> list[Arg]:
        """ "X requires A ..., as well as B": B joins A even when words stand between."""
        for j in range(k, hi - 2):
            if not s.soft[j] and not s.comma[j]:
                break
            if s.comma[j] and [t.low for t in s.toks[j : j + 3]] == ["as", "well", "as"]:
                return self.coordinated(s, j, hi)
        return []

    def colon_list(self, s: Sent, runs: list[Run], end: int, hi: int) -> list[Arg] | None:
        """ "made up of three things: A that ..., B ..., and C ..." names A, B and C."""
        if not runs or end >= hi or ":" not in self.text[s.toks[end - 1].end : s.toks[end].start]:
            return None
        first = runs[0]
        words = [s.toks[k].low for k in range(first.lo, first.hi)]
        counted = first.lo > 0 and s.toks[first.lo - 1].low in QUANTITIES
        if not counted or not all(is_generic(w) for w in words):
            return None
        out: list[Arg] = []
        starts = [end] + [j for j in range(end + 1, hi) if s.comma[j]]
        for k in starts:
            last_item = s.toks[k].low in ("and", "or")
            while k < hi and s.toks[k].low in ("and", "or", "a", "an", "the", "all"):
                k += 1
            item = content_runs(s, k, self.segment_end(s, k, hi)) if k < hi else []
            verb = k < hi and (is_gerund(s.toks[k]) or is_participle(s.toks[k].low))
            if item and item[0].lo == k and not verb:
                arg = self.resolve(s, item[0])
                if arg:
                    out.append(arg)
                    out.extend(a for a in self.coordinated(s, item[0].hi, hi) if a not in out)
            if last_item:
                break
        return out

    def pronoun(self, s: Sent, lo: int, hi: int) -> list[Arg] | None:
        """ "it", "this lesson", "these X": what they point at, or None if not a pronoun."""
        tok = s.toks[lo]
        if tok.low not in ANAPHORIC and tok.low not in PERSONAL:
            return None
        nxt = s.toks[lo + 1] if lo + 1 < hi and s.soft[lo + 1] else None
        if tok.low == "this" and nxt is not None and nxt.low in LESSON_WORDS:
            return [Arg(self.topic, tok.start, nxt.end, 0.05)] if self.topic else []
        if tok.low in ("it", "this") and (nxt is None or nxt.func):
            arg = self.antecedent(s, lo)
            return [arg] if arg else []
        return []  # "they", "these metrics", "its products": nothing we can name

    def subject(self, s: Sent, lo: int, hi: int) -> Arg | None:
        """The first concept of a clause that is not inside a prepositional phrase.

        Opening phrases set off by a comma ("In contrast to X, ...", "Because ..., ",
        "..., which ...,") are skipped: the subject follows them.
        """
        starts = [lo] + [j for j in range(lo + 1, hi) if s.comma[j]]
        for seg_lo, seg_hi in zip(starts, [*starts[1:], hi], strict=True):
            first = s.toks[seg_lo].low if seg_lo < hi else ""
            opener = first in PREPOSITIONS or first in SUBORDINATORS or first in ASIDE_STARTS
            if seg_hi < hi and (opener or seg_lo in s.blocked) and first not in ARTICLES:
                continue
            for run in content_runs(s, seg_lo, seg_hi):
                if any(t.low in PERSONAL for t in s.toks[seg_lo : run.lo]):
                    return None  # the subject is a pronoun; "They ..., whereas B" names no A
                if self.in_pp(s, run, seg_lo) or not self.usable(s, run, seg_hi):
                    continue
                return self.resolve(s, run, head=True)
            return None
        return None

    def antecedent(self, s: Sent, tok: int) -> Arg | None:
        """What "it" at token ``tok`` points at: this sentence's subject, else the last one's.

        The result carries the pronoun's position (for the reason) and a lower confidence.
        """
        arg = self.subject(s, 0, tok)
        if arg is None and s.index > 0:
            prev = self.sents[s.index - 1]
            if not prev.heading and "\n\n" not in self.text[prev.end : s.start]:
                arg = self.subject(prev, 0, len(prev.toks))
        if arg is None:
            return None
        return Arg(arg.cid, s.toks[tok].start, s.toks[tok].end, arg.penalty + 0.1)

    def clause_start(self, s: Sent, k: int) -> int:
        """Where the clause holding token ``k`` begins (commas do not end a clause)."""
        lo = k
        while lo > 0:
            gap = self.text[s.toks[lo - 1].end : s.toks[lo].start]
            if any(c in gap for c in ";:\u2014\u2013") or s.toks[lo - 1].low in CLAUSE_WORDS:
                break
            if s.comma[lo] and s.toks[lo].low in ("and", "but", "so", "yet"):
                break
            lo -= 1
        return lo

    def pick_left(self, s: Sent, cue: int, *, plural: bool) -> list[Arg]:
        """The concept before a cue: its subject, looking past asides and relative clauses."""
        floor = self.clause_start(s, cue)
        k = cue - 1
        while k >= floor and s.toks[k].low in BEFORE_CUE:
            k -= 1
        if k >= floor:
            low = s.toks[k].low
            if low in ("it", "this") and s.mentions.get(k) is None:
                arg = self.antecedent(s, k)
                return [arg] if arg else []
            if low in ("they", "these", "them", "those", "both"):
                return []
            if low in ("which", "that", "who"):
                # The relative clause is about the phrase just before the pronoun.
                before = content_runs(s, floor, k)
                if not before or not self.usable(s, before[-1], k):
                    return []
                arg = self.resolve(s, before[-1])
                return [arg] if arg else []
        starts = [floor] + [j for j in range(floor + 1, cue + 1) if s.comma[j]]
        bounds = list(zip(starts, [*starts[1:], cue], strict=False))
        for at, (seg_lo, seg_hi) in reversed(list(enumerate(bounds))):
            cue_segment = at == len(bounds) - 1
            if not cue_segment and at and s.toks[seg_lo].low in ASIDE_STARTS:
                continue
            runs = self.subject_runs(s, seg_lo, seg_hi)
            args = [(r, a) for r in reversed(runs) if (a := self.resolve(s, r))]
            if args:
                run, arg = next(((r, a) for r, a in args if not a.penalty), args[0])
                arg = self.gerund_subject(s, run, arg, seg_lo)
                if arg is None:
                    return []
                extra = self.coordinated_left(s, run.lo, seg_lo) if plural else []
                return [arg, *extra]
            if cue_segment:
                continue
            break
        return []

    def subject_runs(self, s: Sent, lo: int, hi: int) -> list[Run]:
        """Runs that can be a subject: not "the idea of", not the object of a preposition.

        "In practice LLM-as-a-judge is ..." reads as one run after "In"; the concept the
        run ends with is still the subject.
        """
        out = []
        for run in content_runs(s, lo, hi):
            if not self.usable(s, run, hi):
                continue
            if self.in_pp(s, run, lo):
                later = next((i for i, p in enumerate(run.parts) if i and p[2]), None)
                if later is None:
                    continue
                run = Run(run.parts[later][0], run.hi, run.parts[later:])
            out.append(run)
        return out

    def gerund_subject(self, s: Sent, run: Run, arg: Arg, floor: int) -> Arg | None:
        """ "Evaluating a RAG system requires ..." is about RAG evaluation, not RAG."""
        k = run.lo - 1
        while k >= floor and s.toks[k].low in DETERMINERS:
            k -= 1
        if k == floor and is_gerund(s.toks[k]) and not s.mentions.get(k):
            verb, object_lo, bare = s.toks[k], run.lo, k + 1 == run.lo
        elif run.lo == floor and is_activity(s, run):
            verb, object_lo, bare = s.toks[run.lo], run.parts[1][0], True
            arg = self.resolve(s, Run(object_lo, run.hi, run.parts[1:])) or arg
        else:
            return arg
        words = [t.low for t in s.toks[object_lo : run.hi]]
        while len(words) > 1 and is_generic(words[-1]):
            words.pop()
        stem = verb.low[:-3]
        for noun in (stem + "ion", stem + "ation", stem + "ment", stem + "e", verb.low):
            cid = self.lookup(f"{' '.join(words)} {singular(noun)}")
            if cid:
                return Arg(cid, verb.start, arg.hi)
        # "Building agents" speaks of agents in general; "Comparing two embeddings" does not.
        return Arg(arg.cid, arg.lo, arg.hi, arg.penalty + 0.05) if bare else None

    def coordinated_left(self, s: Sent, k: int, floor: int) -> list[Arg]:
        out = []
        while k > floor:
            j = k - 1
            while j >= floor and s.toks[j].low in ("a", "an", "the", "both"):
                j -= 1
            if j < floor or not (s.toks[j].low in ("and", "or") or s.comma[j + 1]):
                break
            if s.toks[j].low in ("and", "or"):
                j -= 1
            runs = content_runs(s, floor, j + 1)
            if not runs or runs[-1].hi != j + 1:
                break
            arg = self.resolve(s, runs[-1])
            if arg is None:
                break
            out.append(Arg(arg.cid, arg.lo, arg.hi, arg.penalty + 0.03))
            k = runs[-1].lo
        return out
