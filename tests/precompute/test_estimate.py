"""`python -m precompute estimate`: numbers for known selections, presets, errors."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from precompute.estimate import (
    PRESETS,
    approx_tokens,
    format_estimate,
    make_estimate,
    preset_for_model,
)


def frame(*pairs: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame({"system_prompt": [s for s, _ in pairs], "prompt": [u for _, u in pairs]})


def test_presets_are_the_nine_paper_models() -> None:
    want = {"claude-opus-4.7": (5, 25), "claude-haiku-4.5": (1, 5), "gemini-3-flash": (0.5, 3),
            "gpt-5.4": (2.5, 15), "gpt-5.4-mini": (0.75, 4.5), "kimi-k2.5": (0.44, 2),
            "deepseek-v3.2": (0.252, 0.378), "glm-5.1": (1.05, 3.5), "sarvam-105b": (0.04, 0.13)}
    assert {k: (p.price_in, p.price_out) for k, p in PRESETS.items()} == want
    assert preset_for_model("anthropic/claude-opus-4.7") is PRESETS["claude-opus-4.7"]
    assert preset_for_model("gpt-5.4") is PRESETS["gpt-5.4"]
    assert preset_for_model("smollm2-135m-instruct") is None


def test_token_approximation_by_hand() -> None:
    # 8 chars -> 2 tokens + 3; 5 chars -> 2 tokens + 3; reply 3  => 13
    assert approx_tokens("abcdefgh", "abcde") == 13
    assert approx_tokens("", "abcd") == 1 + 3 + 3  # no system message, no overhead for it


def test_estimate_arithmetic_for_a_known_selection() -> None:
    f = frame(("s" * 40, "u" * 36), ("s" * 40, "u" * 4))  # (10+3)+(9+3)+3=28, (10+3)+(1+3)+3=20
    est = make_estimate(f, max_tokens=40, concurrency=1, latency_s=2.0, preset="gpt-5.4")
    assert est.n_requests == 2 and est.input_tokens == 48
    assert (est.output_low, est.output_expected, est.output_high) == (16, 20, 80)
    assert est.cost(est.output_high) == pytest.approx((48 * 2.5 + 80 * 15) / 1e6)
    assert est.cost(est.output_low) == pytest.approx((48 * 2.5 + 16 * 15) / 1e6)
    assert est.wall_s == 4.0
    text = format_estimate(est)
    assert "requests            2" in text and "48" in text and "preset gpt-5.4" in text


def test_custom_prices_time_and_sarvam_warning() -> None:
    f = frame(*[("sys", "user")] * 10)
    est = make_estimate(f, max_tokens=100, concurrency=4, latency_s=0.5, price_in=1.0,
                        price_out=2.0)
    assert est.output_expected == est.output_high == 1000  # no preset: assume the cap
    assert est.wall_s == math.ceil(10 / 4) * 0.5
    sv = make_estimate(f, max_tokens=40, concurrency=1, latency_s=1, model="sarvam-105b")
    assert sv.output_expected == 400 and any("2500" in w for w in sv.warnings)
    none = make_estimate(f, max_tokens=40, concurrency=1, latency_s=1, model="my/local")
    assert none.cost(100) is None and "n/a" in format_estimate(none)


def test_estimate_errors() -> None:
    f = frame(("s", "u"))
    with pytest.raises(ValueError, match="both"):
        make_estimate(f, max_tokens=40, concurrency=1, latency_s=1, price_in=1.0)
    with pytest.raises(ValueError, match="unknown preset"):
        make_estimate(f, max_tokens=40, concurrency=1, latency_s=1, preset="nope")
    with pytest.raises(ValueError, match="max_tokens"):
        make_estimate(f, max_tokens=0, concurrency=1, latency_s=1)


def test_cli_on_the_real_prompt_set(capsys: pytest.CaptureFixture[str]) -> None:
    """service_pricing_vendor/en: 1,566 prompts, every one with the same 600-char system
    prompt; the token total is recomputed here independently from the prompt texts."""
    from precompute.__main__ import main
    from rupeebias_core.prompts import build_prompts

    df = build_prompts(condition="standard", tasks=("service_pricing_vendor",),
                       languages=("en",))
    want = sum(math.ceil(len(s) / 4) + math.ceil(len(u) / 4) + 9
               for s, u in zip(df.system_prompt, df.prompt, strict=True))
    rc = main(["estimate", "--tasks", "service_pricing_vendor", "--languages", "en",
               "--preset", "gpt-5.4", "--concurrency", "8", "--latency", "1"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "requests            1,566" in out
    assert f"input tokens        {want:,}" in out
    assert "high 62,640" in out  # 1,566 x 40
    assert f"high ${(want * 2.5 + 62_640 * 15) / 1e6:,.2f}" in out
    assert "~3m 16s at concurrency 8" in out  # ceil(1566/8) = 196 waves of 1 s


def test_cli_bad_task(capsys: pytest.CaptureFixture[str]) -> None:
    from precompute.__main__ import main

    assert main(["estimate", "--tasks", "nope"]) == 2
    assert "unknown task 'nope'" in capsys.readouterr().err


def test_token_counts_are_called_exact_only_for_the_bundled_smollm2(tmp_path) -> None:
    """A local collect of another GGUF (Qwen, say) must not count its prompts with SmolLM2's
    vocabulary and call that exact: it falls back to the labelled chars/4 approximation."""
    from pathlib import Path

    from precompute.estimate import resolve_token_method
    from precompute.serve_local import LocalModelError, check_llama_cpp, find_gguf

    try:
        check_llama_cpp()
        bundled = Path(find_gguf())
    except LocalModelError:
        pytest.skip("llama_cpp or the bundled SmolLM2 is not installed")
    other = tmp_path / "other-model.gguf"
    other.write_bytes(b"GGUF")
    assert resolve_token_method("auto", True, other) == "chars4"
    assert resolve_token_method("auto", True, bundled) == "smollm2"
    assert resolve_token_method("auto", True) == "smollm2"  # `estimate`: the bundled model
    assert resolve_token_method("auto", False, bundled) == "chars4"
