"""The words questions use: question shapes, actions, subjects, and what the detectors cannot see.

Patterns are matched against the lower-cased question (``ask.intent``). Each table lists the
words people use for one idea, so a new synonym is one entry here.
"""

from __future__ import annotations

import re


def either(*patterns: str) -> str:
    """One pattern matching any of ``patterns`` as whole words."""
    return "|".join(rf"\b{p}\b" for p in patterns)


def words(*patterns: str) -> str:
    """One pattern matching any of ``patterns`` between word boundaries."""
    return rf"\b(?:{'|'.join(patterns)})\b"


# What text in a video is called, in "what ..." and "which ..." questions.
WRITING = r"(?:texts?|words?|signs?|captions?|labels?|banners?|writing)"

# Question shapes, tried in order; the first that matches decides the intent.
SHAPES: tuple[tuple[str, str], ...] = (
    # Many at once ("how many ... at once" is a peak, not a count; ``ask.crowd``).
    (
        "peak",
        r"\bat (?:once|a time|the same time|one time|any (?:one )?(?:time|moment)|most)\b"
        r"|\bsimultaneous\w*"
        r"|\bmost (?:people|ppl|persons|objects|things|movers|figures|pedestrians)\b"
        r"|\bmax(?:imum|imal)?\b|\bbusiest\b|\bpeak\b|\b(?:most |how )?crowded\b",
    ),
    (
        "together",
        r"\btogether\b|\bin (?:a )?(?:groups?|pairs?|twos|threes)\b|\bside by side\b"
        r"|\bas a (?:group|pair)\b"
        r"|\bwith (?:each other|one another|someone|somebody|another (?:person|one))\b"
        r"|\bin company\b|\bgroups? of\b|\bcouples?\b",
    ),
    (
        "duration",
        r"\bhow long\b|\bfor how much time\b|\bduration\b|\blength of\b|\bwait(?:ing)? time\b"
        r"|\bhow many (?:seconds|secs|minutes|mins)\b",
    ),
    ("count", r"\bhow many\b|\bnumber of\b|\bcount\b|\bhow often\b"),
    (
        "text",
        either(
            rf"what {WRITING}",
            r"what does (?:the|a|that|this) \w+ say",
            r"what(?:'s|s| is| was) written",
            r"read (?:the|any)",
            rf"which {WRITING}",
            r"what (?:do|did) the signs? say",
            r"what is (?:on|shown on) the (?:sign|screen)",
        ),
    ),
    (
        "zone",
        r"\bwhich (?:zones?|area|part|side)\b|\bwhere(?:abouts)?\b|\bin what (?:zone|area)\b",
    ),
    ("first", r"\bfirst\b|\bearliest\b"),
    ("last", r"\blast\b|\blatest\b|\bfinal\b"),
    (
        "change",
        r"\bwhat (?:changed|changes|happened) (?:at|during|in) the (?:scene )?(?:change|cut)\b",
    ),
    (
        "between",
        r"\bwhat (?:happened|happens|went on|is going on|was going on)\b|\bdescribe\b"
        r"|\bwhat(?:'s| is| was) (?:going on|happening)\b|\bsummar\w*",
    ),
    (
        "when",
        r"\bwhen\b|\bwhat time\b|\bat what (?:point|moment|second)\b|\btimestamp\b"
        r"|\btime\W*$",  # terse: "scene change time?"
    ),
    (
        "exists",
        r"^(?:is|are|was|were|did|does|do|has|have|can you see|could you see)\b|\bany\b|\bever\b"
        r"|^(?:didn't|isn't|wasn't|weren't|doesn't|aren't)\b",
    ),
    ("list", r"\bwhat (?:objects|things)\b|\bwhich (?:objects|things)\b|\blist\b"),
)

ACTIONS: tuple[tuple[str, str], ...] = (
    (
        "dwell",
        words(
            *[
                # "stand around", "hang about": first, so the whole phrase is read
                r"(?:stand\w*|stood|wait\w*|linger\w*|loiter\w*|h[au]ng\w*) (?:around|about|out)",
                r"dwell\w*",
                r"linger\w*",
                r"loiter\w*",
                r"stay\w*",
                r"stood",
                r"stand\w*",
                r"stop\w*",
                r"wait\w*",
            ],
            *[
                r"pause\w*",
                r"still",
                r"idle",
                r"(?<=stand |stood )around",
                r"(?<=wait |ting )around",
            ],
        ),
    ),
    (
        "enter_zone",
        r"\b(?:enter\w*|go(?:es)? into|went into|walk\w* into|come into|came into|move\w* into)\b",
    ),
    (
        "exit_zone",
        # "left the zone" is leaving; "the left zone" is a place
        r"\b(?:exit\w*|leave|leaves|(?<!the )left (?:the )?(?:zone|area)|go(?:es)? out|went out"
        r"|walk\w* out|c[oa]me out|step\w* out|head\w* out)\b",
    ),
    (
        "disappear",
        words(
            r"disappear\w*",
            r"vanish\w*",
            "gone",
            "go away",
            "went away",
            r"leave the (?:video|frame|scene)",
            r"left the (?:video|frame|scene|picture)",
            r"out of (?:view|sight)",
        ),
    ),
    (
        "appear",
        words(
            r"appear\w*",
            r"show(?:s|ed|n)? up",
            r"arriv\w*",
            r"enter\w* the (?:video|frame|scene|picture)",
            r"c[oa]me into view",
            r"c[oa]me in",
            r"walk\w* in",
            r"step\w* in",
            r"c(?:atch|aught)",
            r"captur\w*",
            *["seen", "visible", "present", "there"],
        ),
    ),
)

SCENE = words(
    r"(?:camera|view|picture|shot|scene|angle|image)(?: (?:view|angle|shot))?"
    r" (?:change\w*|switch\w*|cut\w*|jump\w*)",
    r"scene (?:change|cut)s?",
    r"cuts?",
    r"scene changes?",
    r"shot changes?",
    r"camera (?:change|switch)\w*",
    r"the scene change\w*",
    # "switch to another view", "cut to a different shot": the picture changing
    r"(?:(?:to|into) )?(?:another|a different|a new|the next|a second|(?:the )?other)"
    r" (?:view|shot|camera|angle|scene|picture|image)s?",
    r"(?:view|shot|camera|angle|picture)s? (?:change|switch|jump)\w*",
    r"(?:change|switch|jump)\w* (?:the )?(?:view|shot|camera|angle|picture)s?",
)
TEXT_WORDS = words(
    *[
        "text",
        "texts",
        "sign",
        "signs",
        "signage",
        "caption",
        "captions",
        "writing",
        "written",
        "words?",
        "label",
        "labels",
    ],
    *["banner", "screen"],
)
PEOPLE_WORDS = (
    *[
        "someone",
        "somebody",
        "everyone",
        "everybody",
        "anyone",
        "anybody",
        "people",
        "persons?",
        "person",
        "man",
        "men",
        "woman",
        "women",
    ],
    *[
        "visitors?",
        "customers?",
        "walkers?",
        "pedestrians?",
        "individuals?",
        "ppl",
        "folks?",
        "humans?",
    ],
)
PHYSICAL = words(
    *[
        "objects?",
        "things?",
        "something",
        "anything",
        "movers?",
        "movement",
        "motion",
        "moving",
        "figures?",
        "shapes?",
        "ones?",
        "items?",
    ],
    *PEOPLE_WORDS,
)
PEOPLE = words(*PEOPLE_WORDS)

# Things a video may show that only a detector trained on them can name (COCO and more).
NAMED_THINGS = frozenset(
    re.findall(
        r"\S+",
        """
    face faces bicycle bike car cars truck trucks bus buses motorcycle motorbike train
    boat airplane plane helicopter helicopters drone drones dog dogs cat cats horse horses
    bird birds cow cows sheep elephant bear zebra giraffe animal animals backpack umbrella
    handbag bag suitcase bottle cup chair chairs couch bed table laptop phone tv
    television knife gun guns weapon weapons fire smoke flame flames ball skateboard
    surfboard kite vehicle vehicles van taxi bench package parcel box boxes tree trees
    """,
    )
)
UNSUPPORTED_ATTRIBUTES = (
    (
        "identity",
        # "who was standing there?" asks which thing did; "who is he?" asks a name
        r"\bwho (?:is|was|are|were)\b(?! (?:\w+ing|still|there|in view|seen|visible|present)\b)"
        r"|\bname of\b|\bwhose\b|\bidentif\w*\b|\brecogni\w*\b",
    ),
    (
        "sound",
        r"\b(?:hear|heard|sound|sounds|audio|music|voice|said|say|says|talk\w*|speak\w*|shout\w*)\b",
    ),
    ("emotion", r"\b(?:happy|sad|angry|emotion\w*|feel\w*|mood|smil\w*)\b"),
    ("speed", r"\bhow fast\b|\bspeed\b|\bmph\b|\bkm/h\b"),
    (
        "age or gender",
        r"\bhow old\b|\bage\b|\bgender\b|\b(?:fe)?males?\b|\bwom[ae]n\b|\bm[ae]n\b|\bboys?\b"
        r"|\bgirls?\b|\blad(?:y|ies)\b|\bguys?\b|\bgentlem[ae]n\b|\bkids?\b|\bchild(?:ren)?\b"
        r"|\badults?\b|\belderly\b|\bteen\w*",
    ),
    ("intent", r"\bwhy\b"),
    (
        "when or where it was recorded",
        r"\b(?:when|where|what (?:day|date|year|city|place)) (?:was|were|is) (?:this|it|the"
        r" (?:video|clip|footage|recording)) (?:filmed|recorded|shot|taken|made)\b",
    ),
    (
        "how the camera moved",
        r"\b(?:camera|view|picture|shot) (?:mov\w*|pan\w*|zoom\w*|tilt\w*|shak\w*|turn\w*"
        r"|rotat\w*)|\b(?:pann\w*|zoom\w*|tilt\w*)\b",
    ),
    ("the future", r"\bwill\b.*\b(?:next|later|tomorrow)\b|\bpredict\w*\b"),
)
VIDEO_WORDS = re.compile(
    r"\b(?:video|clip|footage|recording|frame|frames|scene|shot|camera|zone|zones|area|left|right"
    r"|center|centre|middle|appear\w*|disappear\w*|enter\w*|leave|left|exit\w*|dwell\w*|stay\w*"
    r"|linger\w*|loiter\w*|wait\w*"
    r"|stop\w*|happen\w*|visible|seen|see|shown|moving|moved|move\w*|time|when|second|seconds"
    r"|view"
    r"|minute|minutes|start|end|beginning)\b"
)

NUMBER = r"(\d+(?:\.\d+)?)"
CLOCK = r"(\d{1,2}):(\d{2}(?:\.\d+)?)"
TIME = rf"(?:{CLOCK}|{NUMBER}\s*(?:s|sec|secs|second|seconds|min|mins|minute|minutes)?\b)"

# Words that deny the predicate ("how many objects never stopped"); a leading negative auxiliary
# ("didn't the blue one wait?") only asks for confirmation, and is not one of them.
NEGATION = re.compile(
    r"(?<!^)\b(?:not|never|no|none|nothing|nobody|neither|nor|without"
    r"|(?:did|does|do|was|were|is|are|has|have|had)n't)\b"
)
# Words that ask for a summary of the whole video.
SUMMARY_WORDS = re.compile(r"\b(?:summar\w*|tl;?dr|overview|recap|rundown|run-down|gist|sum up)\b")
# How long a summary should be ("a quick recap") changes what is said, not what is true.
SUMMARY_STYLE = re.compile(
    r"\b(?:quick|short|brief)\s+(?:summar\w*|overview|recap|rundown)\b|\bin short\b"
)

# Being there, as opposed to coming into view.
PRESENCE = (
    r"\b(?:seen|visible|present|there|in view|on screen|on camera|in sight|in (?:the )?shot"
    r"|in (?:the )?frame|in the (?:video|picture))\b"
)
# The words a time window is written with (the times themselves are ``TIME``).
WINDOW_WORDS = words(
    "between",
    "from",
    "after",
    "before",
    "until",
    "till",
    "during",
    "around",
    "near",
    "opening",
    "and",
    "to",
)  # "since", "later", "at the end" name no window the reader computes: they are left over
# Words the reader knows, for typo correction (``ask.qualifiers.correct_typos``).
KNOWN_WORDS = frozenset(
    re.findall(
        r"\S+",
        """
    appear appears appeared appearing disappear disappeared disappears arrive arrived
    arrives arriving leave leaves left leaving enter entered enters entering exit exited
    object objects thing things sign signs text texts caption captions label labels visible
    written people person someone anyone anybody somebody change changed changes switch
    switched switches scene camera picture moving moved stopped stop stops waited wait waits
    waiting linger lingered stayed stay longest shortest biggest largest smallest fastest
    slowest first last when where which what happened between after before during seconds
    minutes video frame colour color summary summarise summarize describe walk walked
    walking walks crossed crossing passed passing together group groups running longer
    appearance appearances wearing dressed
        shorter least
        """,
    )
)
