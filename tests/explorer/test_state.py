"""URL ↔ state: parsing, encoding and the allow-lists that keep hostile values out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st_

from explorer.state import Param, clean, encode, parse

LANG = Param("lang", ("all", "en", "hinglish"), "all")
AXIS = Param("axis", ("all", "Religion", "Urban/Rural"), "all")
MODELS = Param("model", ("a", "b", "c"), ("a", "b", "c"), multi=True)


@pytest.mark.parametrize("raw", ["';DROP TABLE x;--", "<script>alert(1)</script>", "\x00",
                                 "en\x00", "x" * 500, "", " en", "EN"])
def test_single_param_ignores_anything_off_the_list(raw: str) -> None:
    assert parse(LANG, [raw]) == "all"


def test_single_param_takes_first_valid_value() -> None:
    assert parse(LANG, ["nope", "hinglish", "en"]) == "hinglish"
    assert parse(AXIS, ["Urban/Rural"]) == "Urban/Rural"  # slashes survive


def test_multi_param_repeated_comma_and_empty() -> None:
    assert parse(MODELS, ["c", "a"]) == ("a", "c")  # option order, deduplicated
    assert parse(MODELS, ["b,c,zzz"]) == ("b", "c")
    assert parse(MODELS, [""]) == ()
    assert parse(MODELS, ["';DROP TABLE x;--"]) == ("a", "b", "c")
    assert parse(MODELS, []) == ("a", "b", "c")


def test_encode_round_trips_and_drops_defaults() -> None:
    assert encode(LANG, "all") is None
    assert encode(LANG, "en") == "en"
    assert encode(MODELS, ("a", "b", "c")) is None
    assert encode(MODELS, ("a",)) == ["a"]
    assert encode(MODELS, ()) == ""
    for value in [("a",), ("b", "c"), ()]:
        enc = encode(MODELS, value)
        raw = enc if isinstance(enc, list) else [enc]
        assert parse(MODELS, raw) == value


def test_an_explicit_param_keeps_its_default_in_the_url() -> None:
    """A default chosen from the data is written out, so the link survives new data."""
    model = Param("model", ("a", "b"), "a", explicit=True)
    assert encode(model, "a") == "a" and encode(model, "b") == "b"
    models = Param("models", ("a", "b"), ("a", "b"), multi=True, explicit=True)
    assert encode(models, ("a", "b")) == ["a", "b"]
    assert parse(Param("model", ("a", "b"), "b"), [encode(model, "a")]) == "a"


def test_clean_rejects_control_characters_and_long_values() -> None:
    assert clean("ok") == "ok"
    assert clean("a\nb") is None and clean("\x7f") is None and clean("x" * 121) is None
    assert clean(None) is None and clean(3) is None  # type: ignore[arg-type]


def test_param_checks_its_default() -> None:
    with pytest.raises(ValueError):
        Param("lang", ("en",), "fr")
    with pytest.raises(TypeError):
        Param("model", ("a",), "a", multi=True)


@given(st_.lists(st_.text(max_size=200), max_size=10))
def test_parse_never_raises_and_stays_on_the_list(raw: list[str]) -> None:
    single = parse(LANG, raw)
    multi = parse(MODELS, raw)
    assert single in LANG.options
    assert set(multi) <= set(MODELS.options)
