"""The offline reader's word lists: closed classes and small open sets of telling words.

There is no part-of-speech tagger: these lists stand in for one. Each says in its comment
what rule reads it; all are lower case, matched against a token's lower-cased text.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PREPOSITIONS = _words(
    """of in on at by for with from to into onto upon over under above below between among
    inside outside beneath past amid
    through throughout during before after since until within without about against along
    alongside across around behind beyond beside besides near toward towards via per than
    like unlike despite except versus vs"""
)
PRONOUNS = _words(
    """i me my mine we us our ours you your yours he him his she her hers it its they them
    their theirs itself themselves ourselves yourself yourselves himself herself something
    anything everything nothing someone anyone everyone this that these those which who
    whom whose what"""
)
DETERMINERS = _words(
    """a an the this that these those each every all both either neither no some any many
    much more most few fewer less least several such other another same own its their
    your our his her my one two three four five six seven eight nine ten"""
)
# Never part of a concept name's edges; a run of other words is a noun-phrase guess.
FUNCTION_WORDS = (
    PREPOSITIONS
    | PRONOUNS
    | DETERMINERS
    | _words(
        """and or but nor so yet if then else because although though while whereas
        whether unless once when where why how is are was were be been being am has have
        had having do does did done can could may might must shall should will would not
        never also only just even still already again always often sometimes usually
        typically generally rather quite very too thus hence therefore however instead here
        there now today first last next finally moreover furthermore indeed perhaps maybe
        almost nearly well alone ones dozens hundreds thousands millions billions etc e.g
        i.e s t let lets get gets got as"""
    )
)
# "Understanding X is essential for Y" is about X.
KNOWING = _words("understanding knowing mastering grasping studying")
# Nouns and adjectives that end in -ly, which the adverb rule must not swallow.
LY_NOUNS = _words(
    """family assembly anomaly supply reply monopoly rally ally early daily weekly monthly
    yearly friendly butterfly italy poly jelly belly homily"""
)
# "-ing" words that usually name a field rather than an activity on an object.
ING_NOUNS = _words(
    """learning training processing computing engineering reasoning modeling modelling
    programming testing thing string nothing something anything everything meaning setting
    embedding encoding"""
)
# Heads that say what kind of thing a concept is; "RAG pipelines" is about RAG.
GENERIC_HEADS = _words(
    """pipeline system approach method technique architecture model framework implementation
    setup suite family loop block layer index table encoder decoder algorithm library
    process workflow stack setting application component module pattern variant version
    paradigm strategy scheme procedure step stage task deployment platform solution service
    tool tooling engine"""
)
# Words that cannot be a concept on their own.
GENERIC_WORDS = GENERIC_HEADS | _words(
    """thing way idea concept part kind type form set number lot example case result side
    practice use term word lesson chapter section article page course topic question problem
    issue point fact reason detail data information work time piece element item aspect
    feature property value option choice tool list group area field unit rest role
    objective goal purpose"""
)
# "the idea of X", "a solid grasp of X": the concept is X.
CONTAINERS = _words(
    """idea concept notion kind type form family class set toolkit knowledge grasp
    understanding picture basic basics principle fundamental heart core basis use field area
    stack number series sequence collection list lot couple variety range mix combination
    subset member example instance style amount way version role purpose importance rest"""
)
QUANTITIES = _words("two three four five six seven eight nine ten several few many")
ANAPHORIC = _words("this that these those its their his her")
PERSONAL = _words("it they them we you he she i")
LESSON_WORDS = _words(
    "lesson chapter section article tutorial page post guide course module unit topic"
)
# Third-person verbs that end a subject guessed from a run of words.
SUBJECT_VERBS = _words(
    """uses keeps works needs makes takes gives lets helps tends performs handles adds
    produces returns computes stores finds learns reads writes captures generates answers
    allows enables remains becomes improves increases changes shows means scales runs costs
    calls passes turns reasons processes compares contains covers scores ranks trains asks
    checks measures evaluates splits merges combines looks sits stays lies goes does creates
    provides offers supports operates gathers converts delivers develops traps requires
    depends relies builds extends consists comprises applies differs contrasts relates
    replaces generalises generalizes assumes mitigates causes leads results guarantees sends
    grows holds moves prints searches selects loads saves receives waits spawns executes
    compiles parses interprets predicts classifies fits outputs emits yields accepts rejects
    fails succeeds follows precedes wraps exposes hides serves prevents ensures avoids
    permits forbids defines describes represents encodes decodes compresses tracks monitors
    publishes listens verifies encrypts rises falls shrinks varies seems appears comes says
    knows wants tries tells brings matches"""
)
# What may stand between a subject and its verb cue without being the subject.
BEFORE_CUE = _words(
    """also often usually typically generally commonly widely frequently mostly largely
    mainly primarily especially particularly therefore thus then still always sometimes
    essentially basically really just only even now both all each not never can could may
    might will would should must does do did has have had itself themselves"""
)
# A comma segment starting with one of these is an aside, not the clause's subject.
ASIDE_STARTS = _words(
    """which who whom whose where when that short also aka i.e e.g such including like for
    especially particularly typically usually often a an the"""
)
MODALS = _words("can could may might will would shall should must")
AUXILIARIES = MODALS | _words("does do did")
CLAUSE_VERBS = _words(
    "is are was were can could may might will would has have had does do did must should"
)
SUBORDINATORS = _words("because since although though while whereas if unless when where once")
CLAUSE_WORDS = _words("because since so but while although though whereas if unless when where")
RIGHT_STOPS = _words(
    """which that who whom whose because since so where when while whereas but although
    though if unless rather than such including like except whether instead"""
)
HEADING_SKIP = _words(
    """overview introduction intro summary conclusion conclusions background motivation
    caveat caveats limitation limitations extension extensions variant variants tooling
    tools ingredient ingredients safety tip tips design example examples exercise exercises
    practice pipeline prerequisite prerequisites connection connections next steps further
    reading reference references recap setup installation usage basic basics fundamentals
    key ideas stage stages step steps side part lesson notes question questions faq history
    application applications use uses wrap up together glossary"""
)
HEADING_OPENERS = _words(
    """what why how when where who which two three four five six seven eight nine ten from
    inside beyond toward towards into putting getting"""
)
# Auxiliaries, copulas and adverbs that may precede a cue's keyword ("is not often used
# for"). They are collected token by token, leftwards from the keyword, so that each cue
# pattern can start at its keyword: optional prefixes tried at every position are slow.
LEAD_WORDS = _words(
    """is are was were be been being am has have had having can could may might must shall
    should will would does do did not never no longer also often usually typically generally
    commonly widely frequently mostly largely mainly primarily especially particularly
    therefore thus then still always sometimes essentially basically really just only even
    now itself themselves both all each isn aren wasn weren doesn don didn hasn haven won
    wouldn shouldn couldn cannot t"""
)
COPULAS = _words("is are was were be been being am isn aren wasn weren")
