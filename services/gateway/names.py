"""Display names: what a player may call themselves, and when two names are the same name.

A name is Unicode text, normalised to NFC, checked by ``check_name`` (the reasons, in this
order, each with its own code in ``schemas.codes``):

- **Spaces at either end are trimmed** (a pasted name often ends in one and nobody sees it);
  two spaces in a row are refused (``name_spaces``), since they are a visible gap that a
  look-alike could leave out.
- **Length** in user-perceived characters (extended grapheme clusters, UAX #29, as ICU
  counts them, and as the web client's ``Intl.Segmenter`` does): at least ``MIN_LENGTH``
  (``name_too_short``), at most ``MAX_LENGTH`` (``name_too_long``, never cut). "Zoë" is three
  whether typed with a precomposed ë or e and a combining diaeresis; 李小龙 is three.
  ``MAX_CODE_POINTS`` bounds the stored text too (a stack of combining marks is too long).
- **Characters** (``name_bad_character`` names the first one refused, and its code point):
  letters (Unicode general category L*), decimal digits (Nd), the space U+0020, the marks in
  ``PUNCTUATION``, and combining marks (Mn, Mc) that follow a letter, at most ``MAX_MARKS``
  on one. Refused: compatibility characters (those NFKC changes: fullwidth letters,
  ligatures, ℌ; UTS #39's identifier profile leaves them out too), controls, format
  characters (zero-width joiners and spaces, bidi overrides and isolates, the soft hyphen),
  every default-ignorable code point (the Hangul fillers), other spaces, symbols, emoji,
  enclosing marks, marks not on a letter and a mark a letter carries twice.
- **At least one letter or digit** (``name_needs_letter``): "--" is no name.
- **Scripts** (``name_mixed_scripts``): UTS #39's *moderately restrictive* level (§5.2).
  One script, or Latin with Han and Hiragana/Katakana (Japanese), Han and Bopomofo, Han and
  Hangul (Korean), or Latin with any one other recommended script except Cyrillic, Greek
  and Cherokee, whose letters are the ones that pass for Latin ones. So "李Lee", "Kim 김" and
  "Ali علي" are names, "Ivan Иван" and "pаypal" (a Cyrillic а) are not.
- **Digits** of one numbering system (``name_mixed_digits``): "12٣" is refused.
- **Reserved** (``reserved_name``): ``RESERVED`` and names confusable with one of them, with
  the separators left out ("Mahjong Planet", "ADMIN", "adrnin" with r and n for m), names
  starting with "guest" and a separator (the guests' own "Guest-123456") or with "computer".

``name_key`` is the *skeleton* that makes two names the same name: case-folded, then UTS #39's
skeleton from ICU's confusables data (``SpoofChecker.getSkeleton``), then case-folded again
(the data maps some letters to capitals: 0 to O). Names with equal keys are taken by each
other: "Anna" and "ANNA", Latin "ax" and Cyrillic "ах", "Zoë" in NFC and NFD, "rn" and "m",
"l" and "1". It follows the data and no more: lower-case "i" and "l" differ, and since case
is folded first (UTS #39's way to compare without case), capital "I" is "i", not "l".

ICU (``pyicu-wheels``: PyICU with ICU in the wheel) does the normalisation, the case folding,
the grapheme count, the character categories, the restriction level and the skeleton, so
every rule uses one Unicode version (ICU's; Python's ``unicodedata`` is older).
"""

from __future__ import annotations

from typing import Any

import icu

from schemas.codes import AccountCode

MIN_LENGTH = 2
MAX_LENGTH = 24
MAX_CODE_POINTS = 64
"""Bound on the stored text: 24 characters of Devanagari or Thai with their marks fit."""
MAX_MARKS = 4
"""Combining marks on one letter: Vietnamese and the Indic scripts need two or three."""
PUNCTUATION = frozenset("-_.'\u2019\u00b7\u30fb")
"""Hyphen, underscore, full stop, apostrophes (' and ’: O'Brien), middle dots (· ・) that
separate the parts of transliterated names in Chinese and Japanese."""
SEPARATORS = frozenset(" ") | PUNCTUATION
RESERVED = (
    "admin",
    "administrator",
    "system",
    "computer",
    "moderator",
    "support",
    "mahjong-planet",
    "guest",
)
"""Names for the service's own voices; with any separators, in any case or look-alike."""

_NFC = icu.Normalizer2.getNFCInstance()
_NFKC = icu.Normalizer2.getNFKCInstance()
_LETTERS = frozenset(
    {
        icu.UCharCategory.UPPERCASE_LETTER,
        icu.UCharCategory.LOWERCASE_LETTER,
        icu.UCharCategory.TITLECASE_LETTER,
        icu.UCharCategory.MODIFIER_LETTER,
        icu.UCharCategory.OTHER_LETTER,
    }
)
_MARKS = frozenset({icu.UCharCategory.NON_SPACING_MARK, icu.UCharCategory.COMBINING_SPACING_MARK})
_DIGIT = icu.UCharCategory.DECIMAL_DIGIT_NUMBER


def _spoof_checker() -> Any:
    checker = icu.SpoofChecker()
    checker.setChecks(
        icu.USpoofChecks.RESTRICTION_LEVEL
        | icu.USpoofChecks.MIXED_NUMBERS
        | icu.USpoofChecks.INVISIBLE
    )
    checker.setRestrictionLevel(icu.URestrictionLevel.MODERATELY_RESTRICTIVE)
    return checker


_CHECKER = _spoof_checker()
_SKELETONS = icu.SpoofChecker()


class NameRefused(Exception):
    """A name that breaks a rule: a stable ``code``, its ``params`` and an English reason."""

    def __init__(self, code: AccountCode, reason: str, **params: str | int) -> None:
        super().__init__(reason)
        self.code, self.reason, self.params = code, reason, params


def nfc(text: str) -> str:
    """``text`` in Unicode Normalization Form C."""
    return str(_NFC.normalize(text))


def fold(text: str) -> str:
    """``text`` in NFC, case-folded: how a name is looked up at login (case-insensitive, as
    before; for ASCII names the same as ``str.lower``)."""
    return nfc(str(icu.UnicodeString(nfc(text)).foldCase()))


def length(text: str) -> int:
    """User-perceived characters (extended grapheme clusters) in ``text``."""
    breaks = icu.BreakIterator.createCharacterInstance(icu.Locale.getRoot())
    breaks.setText(icu.UnicodeString(text))
    return sum(1 for _ in breaks)


def name_key(name: str) -> str:
    """The skeleton two names share when one can pass for the other (module docstring);
    what the account stores hold unique."""
    skeleton = str(_SKELETONS.getSkeleton(0, fold(name)))
    return fold(skeleton)


def codepoint(char: str) -> str:
    return f"U+{ord(char):04X}"


def _refuse_character(char: str) -> NameRefused:
    surrogate = 0xD800 <= ord(char) <= 0xDFFF  # a lone one cannot be encoded back to JSON
    return NameRefused(
        "name_bad_character",
        f"{codepoint(char)} cannot be in a name",
        char="\ufffd" if surrogate else char,
        codepoint=codepoint(char),
    )


def _check_characters(name: str) -> None:
    marks = -1  # combining marks on the letter before; -1: no letter to carry one
    for char in name:
        if str(_NFKC.normalize(char)) != char:  # ｆｕｌｌｗｉｄｔｈ, ligatures, ℌ, ¹
            raise _refuse_character(char)
        kind = icu.Char.charType(char)
        if kind in _MARKS:
            marks = marks + 1 if marks >= 0 else -1
            if marks < 0 or marks > MAX_MARKS:
                raise _refuse_character(char)
            continue
        ignorable = icu.Char.hasBinaryProperty(char, icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT)
        if kind in _LETTERS and not ignorable:
            marks = 0
        elif (kind == _DIGIT or char in SEPARATORS) and not ignorable:
            marks = -1
        else:
            raise _refuse_character(char)


def _repeated_mark(name: str) -> str:
    """The first combining mark that a letter carries twice, after NFD (UTS #39's invisible
    check: é with another acute accent looks like é)."""
    seen: set[str] = set()
    for char in str(icu.Normalizer2.getNFDInstance().normalize(name)):
        if icu.Char.charType(char) not in _MARKS:
            seen = set()
        elif char in seen:
            return char
        else:
            seen.add(char)
    return name[-1]


def _squashed(key: str) -> str:
    return "".join(c for c in key if c not in _SEPARATOR_KEYS)


_SEPARATOR_KEYS = frozenset(name_key(f"x{c}x")[1:-1] for c in SEPARATORS) | SEPARATORS
_RESERVED_KEYS = frozenset(_squashed(name_key(r)) for r in RESERVED)
_GUEST = name_key("guest")
"""Guests are "Guest-123456": "guest" and a separator starts a reserved name."""
_COMPUTER = name_key("computer")
"""The client names computer players "Computer …": any name starting so is reserved."""


def is_reserved(name: str) -> bool:
    """``name`` is, or passes for, a reserved name (module docstring)."""
    key = name_key(name)
    squashed = _squashed(key)
    if squashed in _RESERVED_KEYS or squashed.startswith(_COMPUTER):
        return True
    return key.startswith(_GUEST) and key[len(_GUEST) : len(_GUEST) + 1] in _SEPARATOR_KEYS


def check_name(raw: str) -> str:
    """The name ``raw`` stands for (trimmed, NFC) if it keeps the rules; else raises
    ``NameRefused`` with the first rule it breaks."""
    name = nfc(raw.strip())
    count = length(name) if len(name) <= MAX_CODE_POINTS else MAX_LENGTH + 1  # bounded work
    if count < MIN_LENGTH:
        raise NameRefused(
            "name_too_short", f"a name has at least {MIN_LENGTH} characters", min=MIN_LENGTH
        )
    if count > MAX_LENGTH or len(name) > MAX_CODE_POINTS:
        raise NameRefused(
            "name_too_long", f"a name has at most {MAX_LENGTH} characters", max=MAX_LENGTH
        )
    _check_characters(name)
    if "  " in name:
        raise NameRefused("name_spaces", "a name cannot have two spaces in a row")
    if not any(icu.Char.charType(c) in _LETTERS or icu.Char.charType(c) == _DIGIT for c in name):
        raise NameRefused("name_needs_letter", "a name needs a letter or a digit")
    problems = int(_CHECKER.check(name))
    if problems & icu.USpoofChecks.MIXED_NUMBERS:
        raise NameRefused("name_mixed_digits", "a name uses the digits of one script")
    if problems & icu.USpoofChecks.INVISIBLE:
        raise _refuse_character(_repeated_mark(name))
    if problems:  # the restriction level
        raise NameRefused(
            "name_mixed_scripts", "a name cannot mix scripts that pass for each other"
        )
    if is_reserved(name):
        raise NameRefused("reserved_name", "that name is reserved")
    return name
