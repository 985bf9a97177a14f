"""Display names (services/gateway/names.py): one rule a test, the confusable cases from
Unicode's data (UTS #39 skeletons through ICU), and the web client's limits."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from services.gateway import names
from services.gateway.names import NameRefused, check_name, fold, is_reserved, name_key

ROOT = Path(__file__).resolve().parents[2]


def refused(name: str) -> NameRefused:
    with pytest.raises(NameRefused) as caught:
        check_name(name)
    return caught.value


def test_a_chinese_name_is_accepted() -> None:
    assert check_name("李小龙") == "李小龙"


def test_a_name_with_a_diaeresis_is_accepted() -> None:
    assert check_name("Zoë") == "Zoë"


def test_a_decomposed_name_is_stored_in_nfc() -> None:
    typed = unicodedata.normalize("NFD", "Zoë")
    assert len(typed) == 4
    assert check_name(typed) == unicodedata.normalize("NFC", "Zoë")


def test_other_scripts_and_their_marks_are_names() -> None:
    for name in ("Nguyễn Thị", "नमस्ते", "田中・太郎", "Kim 김", "Ali علي", "李Lee", "O'Brien"):
        assert check_name(name) == name


def test_two_characters_are_enough_and_one_is_too_short() -> None:
    assert check_name("Bo") == "Bo"
    problem = refused("B")
    assert (problem.code, problem.params) == ("name_too_short", {"min": 2})


def test_twenty_four_characters_are_the_most_and_25_are_refused_not_cut() -> None:
    assert check_name("x" * 24) == "x" * 24
    problem = refused("x" * 25)
    assert (problem.code, problem.params) == ("name_too_long", {"max": 24})


def test_length_counts_what_a_reader_sees_not_code_points() -> None:
    decomposed = unicodedata.normalize("NFD", "ë") * 24  # 48 code points, 24 characters
    assert names.length(decomposed) == 24
    assert check_name(decomposed) == "ë" * 24
    assert refused("李" * 25).code == "name_too_long"


def test_spaces_at_the_ends_are_trimmed() -> None:
    assert check_name("  Bob Lee ") == "Bob Lee"


def test_two_spaces_in_a_row_are_refused() -> None:
    assert refused("Bob  Lee").code == "name_spaces"


def test_a_zero_width_joiner_is_refused_and_named() -> None:
    problem = refused("Bo\u200db")
    assert (problem.code, problem.params) == (
        "name_bad_character",
        {"char": "\u200d", "codepoint": "U+200D"},
    )


def test_a_zero_width_space_is_refused() -> None:
    assert refused("Bo\u200bb").params["codepoint"] == "U+200B"


def test_a_bidi_override_is_refused() -> None:
    assert refused("Bob\u202eeve").params["codepoint"] == "U+202E"
    assert refused("Bob\u2067eve").params["codepoint"] == "U+2067"  # an isolate


def test_an_invisible_hangul_filler_is_refused() -> None:
    assert refused("\u3164Bob").params["codepoint"] == "U+3164"


def test_symbols_controls_and_other_spaces_are_refused() -> None:
    for char, point in (
        ("!", "U+0021"),
        ("😀", "U+1F600"),
        ("\x07", "U+0007"),
        ("\u3000", "U+3000"),
    ):
        assert refused(f"Bo{char}b").params == {"char": char, "codepoint": point}


def test_a_lone_surrogate_is_refused_with_a_replacement_to_show() -> None:
    assert refused("Bo\ud800b").params == {"char": "\ufffd", "codepoint": "U+D800"}


def test_fullwidth_letters_are_refused() -> None:
    assert refused("Ｂob").params["codepoint"] == "U+FF22"


def test_a_combining_mark_needs_a_letter() -> None:
    assert refused("\u0301Bob").params["codepoint"] == "U+0301"
    assert refused("B-\u0301ob").params["codepoint"] == "U+0301"


def test_a_mark_a_letter_carries_twice_is_refused() -> None:
    assert refused("Bé\u0301b").params["codepoint"] == "U+0301"


def test_a_name_needs_a_letter_or_digit() -> None:
    assert refused("-_-").code == "name_needs_letter"


def test_latin_mixed_with_cyrillic_is_refused() -> None:
    assert refused("pаypal").code == "name_mixed_scripts"  # a Cyrillic а


def test_latin_mixed_with_greek_is_refused() -> None:
    assert refused("Αlex").code == "name_mixed_scripts"  # a Greek capital alpha


def test_digits_of_two_systems_are_refused() -> None:
    assert refused("Bob12٣").code == "name_mixed_digits"


def test_names_differing_only_by_case_share_a_key() -> None:
    assert name_key("Anna") == name_key("ANNA") == name_key("anna")


def test_a_cyrillic_a_is_a_latin_a() -> None:
    assert name_key("ах") == name_key("ax")  # Cyrillic а and х, Latin a and x
    assert name_key("Tаnya") == name_key("Tanya")


def test_nfd_and_nfc_zoe_share_a_key() -> None:
    assert name_key(unicodedata.normalize("NFD", "Zoë")) == name_key("Zoë")


def test_digit_one_and_l_share_a_key() -> None:
    assert name_key("Bill") == name_key("Bi11") == name_key("BIll")


def test_case_is_folded_before_the_skeleton() -> None:
    # UTS #39 for case-insensitive matching: fold, then skeleton. Capital I is then i,
    # so "ADMIN" is "admin"; the price is that "BiII" is not "Bill".
    assert name_key("ADMIN") == name_key("admin")
    assert name_key("BiII") == name_key("biii") != name_key("Bill")


def test_zero_and_o_share_a_key_and_rn_is_m() -> None:
    assert name_key("B0b") == name_key("Bob")
    assert name_key("rnike") == name_key("mike")


def test_the_data_decides_what_is_confusable() -> None:
    assert name_key("Zoë") != name_key("Zoe")  # a diaeresis is no look-alike
    assert name_key("li") != name_key("ll")  # lower-case i and l are not confusable


def test_reserved_names_are_refused() -> None:
    for name in ("admin", "Administrator", "SYSTEM", "computer", "Moderator", "support"):
        assert refused(name).code == "reserved_name", name
    assert refused("mahjong-planet").code == "reserved_name"


def test_names_confusable_with_reserved_ones_are_refused() -> None:
    for name in ("adrnin", "Mahjong Planet", "mahjong_planet", "SUPP0RT", "ѕуѕ"):
        if name == "ѕуѕ":  # Cyrillic, but no reserved name: a control case
            assert not is_reserved(name)
            continue
        assert refused(name).code == "reserved_name", name


def test_guest_names_and_computer_names_are_reserved() -> None:
    for name in ("Guest-4821", "guest_bob", "GUEST bob", "Computer East"):
        assert refused(name).code == "reserved_name", name
    assert check_name("Guesthouse") == "Guesthouse"


def test_login_folds_case_like_the_old_ascii_lookup() -> None:
    assert fold("ALICE") == "alice"
    assert fold("Zoë") == fold(unicodedata.normalize("NFD", "ZOË"))


def test_the_client_checks_the_same_limits() -> None:
    source = (ROOT / "services/gateway/static/js/names.js").read_text(encoding="utf-8")
    assert re.search(rf"MIN_NAME = {names.MIN_LENGTH};", source)
    assert re.search(rf"MAX_NAME = {names.MAX_LENGTH};", source)
    app = (ROOT / "services/gateway/static/js/app.js").read_text(encoding="utf-8")
    assert "maxlength" not in app  # a long name is refused with its reason, never cut
