"""Try a prompt: send a benchmark slot's counterfactual prompts, or your own question with the
identity swapped, to a model, live, and see Δ% and the signed difference per pair.

Glue only: the rules live in ``explorer.live`` (config, rate limits, probe) and where requests
go in ``precompute.endpoint``. Everything but secrets and the own question's text is in the URL
(``explorer.state``). A typed base URL and API key exist only as widget values for one run (the
key masked): they are passed to ``explorer.live.run_probe`` as arguments and the widgets are
cleared right after the send (see docs/try-a-prompt.md).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Collection, Mapping
from typing import Any

import pandas as pd
import streamlit as st

from explorer import live, numbers, ui, vocab
from explorer.state import PageState, Param, clean
from explorer.state import parse as parse_param
from rupeebias_core import benchmark as bm

PAGE = "try_prompt"
#: Typed-endpoint widgets (local mode, custom endpoint; only the key is masked). Their values
#: are never copied anywhere.
SECRET_URL_KEY = f"{PAGE}.secret_base_url"
SECRET_KEY_KEY = f"{PAGE}.secret_api_key"
_CLEAR_SECRETS = f"{PAGE}._clear_secrets"
_SHOWN_SPEC = f"{PAGE}._shown_spec"
_RESULT = f"{PAGE}._result"
_MESSAGES = f"{PAGE}._messages"

TEMPERATURES: tuple[str, ...] = tuple(f"{i / 10:.1f}" for i in range(21))  # 0.0 … 2.0
MAX_TOKEN_CHOICES: tuple[int, ...] = (16, 32, 40, 64, 128, 256, 512, 1024, 2048)
SCOPE_LABELS = {"pair": "Two identifiers", "axis": "Whole axis"}
STYLE_LABELS = {"indented": "Indented (as the published runs)", "dedented": "Dedented"}
MODE_LABELS = {"slot": "Benchmark slot", "own": "Write your own"}
SYSTEM_LABELS = {"benchmark": "The benchmark's system prompt for that format", "none": "None"}
#: Own-question text areas (session only: free text is not put in the link).
Q_EN_KEY = f"{PAGE}.q_en"
Q_HI_KEY = f"{PAGE}.q_hinglish"


# --------------------------------------------------------------------------------------------
# configuration and shared resources


def _secrets() -> dict[str, Any]:
    """``st.secrets`` as a plain dict: {} when there is no secrets.toml, LiveConfigError when
    there is one that cannot be read (never a silent fall-back to local mode)."""
    return live.read_secrets(lambda: st.secrets.to_dict())


@st.cache_resource(show_spinner="Starting the bundled SmolLM2 model (first use only)…",
                   validate=live.local_server_alive)
def _local_base_url(override: str) -> str:
    """One bundled llama.cpp server per app process (``override``: $RUPEEBIAS_LOCAL_BASE_URL).

    Failures raise and are therefore not cached: the next Send retries."""
    env = {live.ENV_LOCAL_BASE_URL: override} if override else {}
    return live.start_local_server(env)


@st.cache_resource(show_spinner=False)
def _global_bucket(per_minute: int) -> live.SharedBucket:
    """The process-wide request bucket (public mode): a reload does not reset it."""
    return live.SharedBucket(per_minute)


@st.cache_resource(show_spinner=False)
def _client_buckets(per_minute: int) -> live.ClientBuckets:
    """Per-client buckets shared by all sessions: a new session does not get a full bucket."""
    return live.ClientBuckets(per_minute)


def _visitor() -> tuple[str, bool]:
    """(rate-limit key, is this a remote visitor?). Streamlit reports loopback as None."""
    import ipaddress

    try:
        ip = st.context.ip_address
        headers = dict(st.context.headers) if cfg.client_ip_header else None
    except Exception:  # noqa: BLE001 - no client context (bare script run)
        ip, headers = None, None
    ip = ip if isinstance(ip, str) else None  # a str or None in a real server
    try:
        remote = ip is not None and not ipaddress.ip_address(ip).is_loopback
    except ValueError:
        remote = True
    return live.client_key(ip, headers, cfg.client_ip_header), remote


def _comparable_models() -> dict[str, str]:
    """Models with stored responses (the precomputed side of the comparison), with the label
    the other pages give them ("SmolLM2-135M-Instruct (bundled)", not its file slug)."""
    try:
        from explorer import data

        models = data.available_models()
        raw = models[models["has_raw"].astype(bool)]
        return {str(m): str(label) for m, label in zip(raw["model"], raw["label"], strict=True)}
    except Exception:  # noqa: BLE001 - no data dir / DuckDB problem: just no comparison
        return {}


def _default_compare(model: str, candidates: Collection[str]) -> str:
    if not model:
        return ""
    tail = model.rsplit("/", 1)[-1].lower()
    for cand in (model, model.lower(), tail):
        if cand in candidates:
            return cand
    return ""


# --------------------------------------------------------------------------------------------
# labels




def _fmt_diff(value: float | None, unit: str) -> str:
    return numbers.signed(value, 0, " ₹") if unit == "₹" else numbers.signed(value, 2, " pp")


def _fmt_ci_diff(lo: float | None, hi: float | None, unit: str) -> str:
    ci = numbers.interval(lo, hi, 0 if unit == "₹" else 2, sign=True)
    return ci if ci == numbers.MISSING else f"{ci} {'₹' if unit == '₹' else 'pp'}"


# --------------------------------------------------------------------------------------------
# the page

ui.ensure_router()  # a deep link right after a server start: rerun inside app.py first
st.title("Try a prompt")
st.markdown(
    "Pick a benchmark slot — use case, profile, question and language — **or write your own "
    "question**, and identifiers that differ **only** in the demographic phrase. The prompts go "
    "to a model live, concurrently; you see every raw answer, the number parsed from it, "
    "**Δ%** for each pair — |a − b| / ((a + b)/2) × 100, the paper's relative gap "
    "(0 = identical answers) — and the signed difference in ₹ or percentage points."
)

env: Mapping[str, str] = os.environ
try:
    secrets = _secrets()
    cfg = live.load_config(secrets, env)
except live.LiveConfigError as exc:
    # Fail closed: no guess at a mode, no endpoint, nothing sent.
    st.error(str(exc), icon=":material/lock:")
    st.stop()
limits = cfg.limits
visitor_key, remote_visitor = _visitor()
if remote_visitor and cfg.allow_custom:
    # Typed endpoints are for the machine's owner: a visitor from another host never gets them.
    cfg = dataclasses.replace(cfg, endpoints=tuple(
        ep for ep in cfg.endpoints if ep.kind != "custom"), custom_opt_in=False)

# Secrets typed for the previous run are cleared before their widgets are drawn again.
if st.session_state.pop(_CLEAR_SECRETS, False):
    st.session_state[SECRET_URL_KEY] = ""
    st.session_state[SECRET_KEY_KEY] = ""

if cfg.public_mode:
    rate = f"{limits.requests_per_minute} requests per minute" if limits.requests_per_minute \
        else "no rate limit"
    st.info(
        f"**Public demo mode.** Choose among the configured models only. Limits per run: "
        f"{limits.max_identifiers} identifiers, {limits.max_repeats} repeats, "
        f"{limits.max_requests_per_run} requests; {rate} per visitor (retries included).",
        icon=":material/public:",
    )
if cfg.problems:
    if cfg.public_mode:
        st.caption("Some live-endpoint settings were ignored (see the server configuration).")
    else:
        with st.expander(f"Live configuration: {len(cfg.problems)} setting(s) ignored"):
            for p in cfg.problems:
                st.markdown(f"- {p}")

#: The use case the page opens on (see the task parameter below).
DEFAULT_TASK = "salary_increment_estimation"

# ---- URL-bound state, phase 1: the choices the other options depend on
endpoint_names = cfg.endpoint_names or ("",)
base_params = [
    Param("mode", tuple(MODE_LABELS), "slot"),
    Param("fmt", tuple(live.ANSWER_TASKS), "inr"),
    Param("sysp", tuple(SYSTEM_LABELS), "benchmark"),
    # Opens on salary increments: the use case whose answers both bundled models most often
    # give as a readable number (parse_health); on salary estimation SmolLM2's first answers
    # run past the token limit, and a first visit showed "0 / 2 parsed".
    Param("task", bm.TASKS, DEFAULT_TASK),
    Param("lang", bm.LANGUAGES, bm.LANGUAGES[0]),
    Param("axis", bm.AXES, "Gender"),
    Param("scope", tuple(SCOPE_LABELS), "pair"),
    Param("endpoint", endpoint_names, endpoint_names[0]),
    Param("style", ("indented", "dedented"), bm.DEFAULT_SYSTEM_PROMPT_STYLE),
    Param("fair", ("off", "on"), "off"),
]
PageState(PAGE, base_params).seed()


def _k(name: str) -> str:
    return f"{PAGE}.{name}"


mode = str(st.session_state[_k("mode")])
task = str(st.session_state[_k("task")])
lang = str(st.session_state[_k("lang")])
axis = str(st.session_state[_k("axis")])
endpoint = cfg.endpoint(str(st.session_state[_k("endpoint")]))
idents = tuple(i.value for i in bm.identifiers_for_axis(axis))
canon_a, canon_b = bm.CANONICAL_PAIRS[axis]

# ---- phase 2: options that depend on phase 1
if endpoint is not None and endpoint.kind == "custom":
    typed = [v for v in (st.session_state.get(_k("model")), *st.query_params.get_all("model"))
             if isinstance(v, str) and v and clean(v) is not None]
    model_options: tuple[str, ...] = ("",)
    for v in typed:
        try:
            ok = live.validate_model_id(v)
        except ValueError:
            continue
        if ok not in model_options:
            model_options += (ok,)
    model_default = ""
else:
    model_options = endpoint.models if endpoint is not None and endpoint.models else ("",)
    model_default = model_options[0]
token_choices = tuple(str(t) for t in MAX_TOKEN_CHOICES if t <= limits.max_tokens) or (
    str(limits.max_tokens),)
# 40 = the shipped runs' and the paper's max_tokens (collect --max-tokens).
tokens_default = (str(live.DEFAULT_MAX_TOKENS) if str(live.DEFAULT_MAX_TOKENS) in token_choices
                  else token_choices[-1])
compare_models = _comparable_models()
model_param = Param("model", model_options, model_default)
current_model = st.session_state.get(_k("model"))
if current_model not in model_options:  # not seeded yet: what the URL asks for
    current_model = parse_param(model_param, st.query_params.get_all("model"))
all_params = [
    *base_params,
    Param("profile", tuple(p.profile_id for p in bm.profiles(task)),
          bm.profiles(task)[0].profile_id),
    Param("qv", tuple(q.id for q in bm.question_variants(task, lang)), "Q1"),
    Param("a", idents, canon_a),
    Param("b", idents, canon_b),
    model_param,
    Param("n", tuple(str(i) for i in range(1, limits.max_repeats + 1)), "1"),
    Param("temp", TEMPERATURES, "0.0"),
    Param("max_tokens", token_choices, tokens_default),
    Param("cmp", ("", *compare_models), _default_compare(str(current_model), compare_models)),
]
state = PageState(PAGE, all_params)

state.seed()
# Tell the reader which link parameters were ignored (names only, never the values).
if state.rejected():
    st.warning(
        "Ignored link parameter(s): " + ", ".join(f"`{n}`" for n in dict.fromkeys(
            state.rejected()))
        + f". Their values are not valid here (repeats must be 1–{limits.max_repeats}; "
        "identifiers must belong to the chosen axis; models must be offered by the chosen "
        "endpoint).",
        icon=":material/link_off:",
    )

# ---- widgets: what to send
st.subheader("1 · What to send")
st.radio("Question", tuple(MODE_LABELS), key=_k("mode"), format_func=MODE_LABELS.get,
         horizontal=True,
         help="A benchmark slot as the published runs asked it, or your own question with "
              "the identity phrase swapped.")
if mode == "own":
    st.text_area(
        "Your question (English)", key=Q_EN_KEY, max_chars=limits.max_question_chars,
        placeholder="I have 3 years of experience as a data analyst in Pune. What annual "
                    "salary should I ask for?",
        help=f"Each identifier's benchmark phrase (e.g. “I am male”) goes where you write "
             f"`{live.IDENTITY_MARKER}`, or, without a marker, before your question, as in "
             f"the benchmark's prompts. At most {limits.max_question_chars:,} characters.")
    st.text_area(
        "Hinglish version (optional)", key=Q_HI_KEY, max_chars=limits.max_question_chars,
        placeholder="Mere paas 3 saal ka experience hai… Mujhe kitni salary maangni chahiye?",
        help="Sent too, with the identifiers' Hinglish phrases (“Main male hoon”).")
    c1, c2 = st.columns(2)
    c1.radio("Answer format", tuple(live.ANSWER_TASKS), key=_k("fmt"),
             format_func=live.ANSWER_LABELS.get, horizontal=True,
             help="Also picks the parser: ₹ amounts as salary estimation is parsed, % as the "
                  "salary-increment answers. The salary rules then apply to your question too: "
                  "an amount is read as a yearly salary (a bare \"### 150 INR\" as 150 lakh, "
                  "₹1.5 crore) and only "
                  "₹1 lakh–₹10 crore counts; anything else is marked implausible and forms no "
                  "pair. Ask for a yearly amount in rupees.")
    c2.radio("System prompt", tuple(SYSTEM_LABELS), key=_k("sysp"),
             format_func=SYSTEM_LABELS.get, horizontal=True)
    c1, c2 = st.columns(2)
    c1.selectbox("Axis", bm.AXES, key=_k("axis"))
    c2.radio("Compare", tuple(SCOPE_LABELS), key=_k("scope"), format_func=SCOPE_LABELS.get,
             horizontal=True)
else:
    c1, c2 = st.columns(2)
    with c1:
        st.selectbox("Use case", bm.TASKS, key=_k("task"), format_func=bm.TASK_LABELS.get)
        st.selectbox("Profile", [p.profile_id for p in bm.profiles(task)], key=_k("profile"),
                     format_func=functools.partial(bm.profile_summary, task))
        st.selectbox("Axis", bm.AXES, key=_k("axis"))
    with c2:
        st.radio("Language", bm.LANGUAGES, key=_k("lang"), format_func=bm.LANGUAGE_LABELS.get,
                 horizontal=True)
        qv_text = {q.id: q.text for q in bm.question_variants(task, lang)}
        st.selectbox("Question variant", list(qv_text), key=_k("qv"),
                     format_func=lambda q: f"{q} · {qv_text[q]}")
        st.radio("Compare", tuple(SCOPE_LABELS), key=_k("scope"), format_func=SCOPE_LABELS.get,
                 horizontal=True)
scope = str(st.session_state[_k("scope")])
if scope == "pair":
    c1, c2 = st.columns(2)
    c1.selectbox("Identifier A", idents, key=_k("a"))
    c2.selectbox("Identifier B", idents, key=_k("b"))
    chosen = (str(st.session_state[_k("a")]), str(st.session_state[_k("b")]))
else:
    chosen = idents
    st.caption(f"All {len(idents)} identifiers of {axis}: {len(idents) * (len(idents) - 1) // 2} "
               "pairs.")

# ---- widgets: where to send
st.subheader("2 · Where to send")
typed_url = typed_key = ""
if endpoint is None or endpoint.kind != "custom":
    # Leaving the custom endpoint drops anything typed there (nothing lingers in the session).
    for secret_key in (SECRET_URL_KEY, SECRET_KEY_KEY):
        st.session_state.pop(secret_key, None)
if endpoint is None:
    st.error("No live endpoint is configured. In public mode the operator must list endpoints "
             "in `.streamlit/secrets.toml` (`[[live.endpoints]]`) or `RUPEEBIAS_LIVE_ENDPOINTS`; "
             "see docs/try-a-prompt.md.", icon=":material/cloud_off:")
else:
    st.selectbox("Endpoint", cfg.endpoint_names, key=_k("endpoint"),
                 format_func=lambda n: cfg.endpoint(n).label if cfg.endpoint(n) else n)
    if endpoint.kind == "custom":
        st.caption("Any OpenAI-compatible server (vLLM, Ollama, llama.cpp, a hosted API). The "
                   "URL and key are used for one send and then cleared: never stored, logged, "
                   "put in the link or shown back. To keep an endpoint, configure it in "
                   "`.streamlit/secrets.toml` instead.")
        cu, ck = st.columns(2)
        typed_url = cu.text_input("Base URL", key=SECRET_URL_KEY,
                                  placeholder="http://localhost:11434/v1", autocomplete="off")
        typed_key = ck.text_input("API key (blank if none)", type="password", key=SECRET_KEY_KEY,
                                  autocomplete="off")
        st.text_input("Model id", key=_k("model"), max_chars=live.MAX_MODEL_ID_LENGTH,
                      placeholder="e.g. llama3.1:8b")
    else:
        st.selectbox("Model", model_options, key=_k("model"))
    if endpoint.kind == "local":
        local_status = live.local_model_status(env)
c1, c2 = st.columns(2)
c1.select_slider("Repeats per prompt", [str(i) for i in range(1, limits.max_repeats + 1)],
                 key=_k("n"), help="Send every prompt n times to see how stable the answer is.")
c2.select_slider("Temperature", TEMPERATURES, key=_k("temp"),
                 help="0 is what the paper used. At 0, repeats are usually identical.")
with st.expander("Advanced"):
    st.select_slider("max_tokens", token_choices, key=_k("max_tokens"),
                     help=f"Default {live.DEFAULT_MAX_TOKENS}, as the shipped runs and the "
                          "paper: the benchmark's answers are one short line.")
    st.radio("System prompt form", ("indented", "dedented"), key=_k("style"),
             format_func=STYLE_LABELS.get, horizontal=True,
             help="The published runs sent an indented copy of the system prompt.")
    if mode != "own":
        st.radio("Fairness instruction", ("off", "on"), key=_k("fair"), horizontal=True,
                 help=f"Appends “{bm.FAIRNESS_INSTRUCTION}” to the system prompt (the paper's "
                      "ablation, run on salary estimation only).")
if mode != "own":
    st.selectbox("Compare with the precomputed result of", ("", *compare_models), key=_k("cmp"),
                 format_func=lambda m: compare_models.get(m, m) or "— none —",
                 help="Stored responses for the same slot, computed offline by `precompute`.")
    if not compare_models:
        st.caption("No precomputed responses are available in the data directory, so there "
                   "is nothing to compare with.")

state.sync()

model = str(st.session_state.get(_k("model")) or "")
if endpoint is not None and endpoint.kind == "custom":
    model = model.strip()
try:
    spec: live.AnySpec
    if mode == "own":
        spec = live.OwnSpec(
            question_en=str(st.session_state.get(Q_EN_KEY) or ""),
            question_hinglish=str(st.session_state.get(Q_HI_KEY) or ""),
            axis=axis,
            identifiers=tuple(chosen),
            answer=str(st.session_state[_k("fmt")]),
            system_prompt=st.session_state[_k("sysp")] == "benchmark",
            repeats=int(st.session_state[_k("n")]),
            temperature=float(st.session_state[_k("temp")]),
            max_tokens=int(st.session_state[_k("max_tokens")]),
            system_prompt_style=str(st.session_state[_k("style")]),
        )
    else:
        spec = live.ProbeSpec(
            task=task,
            language=lang,
            profile_id=str(st.session_state[_k("profile")]),
            question_variant_id=str(st.session_state[_k("qv")]),
            axis=axis,
            identifiers=tuple(chosen),
            repeats=int(st.session_state[_k("n")]),
            temperature=float(st.session_state[_k("temp")]),
            max_tokens=int(st.session_state[_k("max_tokens")]),
            system_prompt_style=str(st.session_state[_k("style")]),
            fairness=st.session_state[_k("fair")] == "on",
        )
except (TypeError, ValueError):  # defensive: widget state is validated by PageState
    st.error("The selection is not valid; reset the page.")
    st.stop()
problems = live.check_spec(spec, limits)

# ---- the exact prompts
plannable = not [p for p in problems if "Unknown" in p] and not (
    isinstance(spec, live.OwnSpec) and not spec.question_en.strip())
plans = live.plan_prompts(spec) if plannable else []
n_system = 1 if plans and plans[0].system else 0
with st.expander(f"Exact prompts sent: {n_system} system message + {len(plans)} user messages",
                 expanded=scope == "pair" or mode == "own"):
    if plans:
        if n_system:
            st.markdown("**System message** (the same for every identifier)")
            ui.verbatim(plans[0].system)
        else:
            st.markdown("**No system message**: only the user messages below are sent.")
        two_langs = len(spec.languages) > 1
        for p in plans:
            lang_note = f" · {bm.LANGUAGE_LABELS[p.language]}" if two_langs else ""
            st.markdown(f"**User message · {p.identifier_value}{lang_note}**")
            ui.verbatim(p.user)
    elif mode == "own":
        st.caption("Write your question to see the exact messages.")


def _shipped_answers() -> None:
    """The stored answers of the bundled model for the chosen slot (shown while it cannot run
    here): the same prompts, collected offline by `precompute collect`."""
    if mode == "own":
        st.caption("Your own question has no shipped answers; they exist for benchmark slots.")
        return
    condition = "fairness" if spec.fairness else "standard"
    try:
        from explorer import data

        slot = data.slot_rows(live.local_model_id(), spec.task, spec.language,
                              spec.profile_id, spec.question_variant_id, spec.axis, condition,
                              method="corrected")
    except Exception:  # noqa: BLE001 - no data dir, no such slot, DuckDB problem
        slot = None
    if slot is None or not len(slot) or "identifier_value" not in slot:
        st.caption("No shipped answers of the bundled model are available for this slot.")
        return
    rows = slot[slot["identifier_value"].isin(spec.identifiers)]
    st.markdown("**Meanwhile: the shipped answers of the bundled model for this slot** "
                "(collected offline with the same prompts, temperature 0, max_tokens 40)")
    st.dataframe(pd.DataFrame({
        "identifier": rows["identifier_value"],
        "stored answer": rows["response"] if "response" in rows else None,
        "parsed value": rows["value"] if "value" in rows else None,
        "status": rows["status"] if "status" in rows else None,
    }), hide_index=True, key=f"{PAGE}.shipped", placeholder=numbers.MISSING)


if endpoint is not None and endpoint.kind == "local" and not local_status.available:
    fix = local_status.fix
    st.warning(
        f"{local_status.problem} Sending to it will fail until you run, in a terminal in the "
        f"project folder:\n\n`{fix}`\n\nand then restart the app. Or choose another "
        "endpoint.", icon=":material/download:")
    _shipped_answers()

# ---- send
st.subheader("3 · Send")
n_prompts = len(spec.identifiers) * len(spec.languages)
st.caption(f"This run sends **{spec.n_requests} requests** ({n_prompts} prompts × "
           f"{spec.repeats} repeat(s)), at most {limits.concurrency} at a time.")
clients = None
if limits.requests_per_minute:
    # Keyed on the client, not the session: a reload or a new tab starts no fresh bucket.
    clients = _client_buckets(limits.requests_per_minute)
    st.caption(f"Rate limit: {int(clients.available(visitor_key))} of "
               f"{limits.requests_per_minute} requests left this minute for you (retries "
               "count).")
for p in problems:
    st.error(p, icon=":material/block:")
send = st.button(f"Send {spec.n_requests} requests", type="primary",
                 disabled=bool(problems) or endpoint is None, key=f"{PAGE}.send")
# Send fires only for the selection the reader saw: if this run's selection differs from the
# one the previous run showed (widget values that changed with the click), nothing is sent.
shown_before = st.session_state.get(_SHOWN_SPEC)
st.session_state[_SHOWN_SPEC] = spec
if send and shown_before is not None and shown_before != spec:
    send = False
    changed = ([f.name for f in dataclasses.fields(spec)
                if getattr(spec, f.name) != getattr(shown_before, f.name)]
               if type(spec) is type(shown_before) else ["question"])
    st.warning(f"The selection changed as Send was pressed ({', '.join(changed)}), so nothing "
               "was sent. Check the prompts above and press Send again.",
               icon=":material/sync_problem:")


def _send() -> tuple[live.ProbeResult | None, list[str]]:
    """Resolve the endpoint, apply limits and run the probe. Returns (result, messages)."""
    assert endpoint is not None
    scrub: tuple[str, ...] = ()
    if endpoint.kind == "custom":
        try:
            base_url = live.validate_base_url(typed_url)
            chosen_model = live.validate_model_id(model)
        except ValueError as exc:
            return None, [str(exc)]
        api_key = typed_key.strip() or live.DUMMY_KEY
        scrub = live.url_secrets(base_url)
    elif endpoint.kind == "local":
        try:
            base_url = _local_base_url(env.get(live.ENV_LOCAL_BASE_URL, ""))
        except live.LocalModelUnavailable as exc:
            if cfg.public_mode:  # the launcher's error can name paths and ports
                return None, ["The bundled model is unavailable right now; choose another "
                              "endpoint."]
            return None, [str(exc)]
        api_key, chosen_model = live.DUMMY_KEY, model
    else:
        base_url = str(endpoint.base_url)
        api_key = live.endpoint_api_key(endpoint, secrets, env)
        chosen_model = model
        if chosen_model not in endpoint.models:
            return None, ["Choose one of the models this endpoint offers."]
        scrub = live.url_secrets(base_url)  # an operator's internal host is nobody's business
    # Rate limits: the client's bucket first, then the process-wide one (refund on refusal).
    # Each run takes its first attempts here; every retry is charged by `charge` as it happens.
    n = spec.n_requests
    global_bucket = (_global_bucket(limits.global_requests_per_minute)
                     if limits.global_requests_per_minute else None)
    if clients is not None:
        wait = clients.take(visitor_key, n)
        if wait:
            when = "never within the cap" if math.isinf(wait) else f"in about {math.ceil(wait)} s"
            return None, [f"Rate limit reached: you may send {limits.requests_per_minute} "
                          f"requests per minute (retries included). Try again {when}."]
    if global_bucket is not None:
        wait = global_bucket.take(n)
        if wait:
            if clients is not None:
                clients.give_back(visitor_key, n)
            return None, ["The live demo is busy (app-wide rate limit). Try again in about "
                          f"{max(1, math.ceil(wait if math.isfinite(wait) else 60))} s."]
    charge = (live.RetryCharge(clients, visitor_key, global_bucket)
              if clients is not None or global_bucket is not None else None)
    bar = st.progress(0.0, text=f"Sending {n} requests…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total, text=f"{done} of {total} answers received")

    result = live.run_probe(
        base_url, api_key, spec, chosen_model,
        endpoint_name=endpoint.name,
        endpoint_label="Custom endpoint" if endpoint.kind == "custom" else endpoint.label,
        timeout_s=limits.timeout_s, concurrency=limits.concurrency,
        on_result=progress, scrub=scrub, may_retry=charge, public=cfg.public_mode,
    )
    bar.empty()
    return result, []


if send and not problems and endpoint is not None:
    try:
        result, messages = _send()
    except Exception as exc:  # noqa: BLE001 - never let a send crash the page (or leak secrets)
        result = None
        if cfg.public_mode:  # the exception text may name an internal host
            messages = [f"The run failed unexpectedly ({type(exc).__name__})."]
        else:
            messages = ["The run failed unexpectedly: " + (live.redact_secrets(
                f"{type(exc).__name__}: {exc}", (typed_key, *live.url_secrets(typed_url))) or "")]
    if result is not None:
        st.session_state[_RESULT] = result
    st.session_state[_MESSAGES] = messages
    if endpoint.kind == "custom":
        # Clear the typed URL and key: next run resets the widgets before drawing them.
        st.session_state[_CLEAR_SECRETS] = True
        st.rerun()

for msg in st.session_state.pop(_MESSAGES, []) or []:
    st.error(msg, icon=":material/error:")

# ---- results
result: live.ProbeResult | None = st.session_state.get(_RESULT)
if result is not None:
    rs = result.spec
    st.subheader("Results")
    own_run = isinstance(rs, live.OwnSpec)
    what = (f"your question ({' + '.join(bm.LANGUAGE_LABELS[x] for x in rs.languages)}) · "
            f"answer {live.ANSWER_LABELS[rs.answer]} · "
            f"{'benchmark system prompt' if rs.system_prompt else 'no system prompt'}"
            if isinstance(rs, live.OwnSpec) else
            f"{bm.TASK_LABELS[rs.task]} · {bm.LANGUAGE_LABELS[rs.language]} · {rs.profile_id} · "
            f"{rs.question_variant_id}")
    st.caption(
        f"{result.endpoint_label} · model `{result.model}` · {what} · "
        f"{rs.axis} · temperature {rs.temperature:g} · {rs.repeats} repeat(s) · "
        f"sent {result.started_at} · {result.elapsed_s:.1f} s"
    )
    if rs != spec:
        st.info("These results are for an earlier selection; press Send to run the current one.",
                icon=":material/history:")
        with st.expander("Prompts sent in this run"):
            ui.verbatim(result.prompts[0].system or "(no system message)")
            for p in result.prompts:
                st.markdown(f"**User message · {p.identifier_value} · {p.language}**")
                ui.verbatim(p.user)
    s = result.summary
    unit = live.value_unit_label(rs.task, markup=False)
    diff_unit = live.difference_unit(rs.task, markup=False)
    m1, m2, m3 = st.columns(3)
    m1.metric("Answers parsed", f"{s['n_parsed']} / {s['n_requests']}",
              help="Answers from which a number could be read (strict format or recovered).")
    m2.metric("Mean Δ% of this run", numbers.MISSING if s["mean_delta"] is None
              else f"{numbers.num(s['mean_delta'], 2)} %",
              help="Mean of every per-repeat pair Δ% of this run.")
    m3.metric("Pairs with Δ% > 10", f"{s['pairs_over_10']} / {s['n_pairs']}")
    ui.explain("One profile and one wording: this run shows how the model's numbers arise, "
               "not its gap on the benchmark (the result pages average over every profile and "
               "wording, with intervals over profiles).")
    if s["n_errors"]:
        st.warning(f"{s['n_errors']} request(s) failed; see the error column below.",
                   icon=":material/warning:")

    pairs = result.pairs
    if len(pairs) == 1:
        p = pairs.iloc[0]
        ci = numbers.interval(p["delta_lo"], p["delta_hi"], 2)
        st.metric(f"Δ% · {p['identifier_a']} vs {p['identifier_b']}",
                  numbers.MISSING if pd.isna(p["delta"]) else f"{numbers.num(p['delta'], 2)} %")
        if p["n_repeats"] >= 2:
            st.caption(f"95 % CI {ci}: Student-t over {int(p['n_repeats'])} per-repeat Δ% values.")
    if len(pairs) <= 2 and len(pairs):
        for p in pairs.itertuples(index=False):
            lang_note = f" · {bm.LANGUAGE_LABELS[p.language]}" if len(rs.languages) > 1 else ""
            st.metric(f"B − A · {p.identifier_b} − {p.identifier_a}{lang_note}",
                      _fmt_diff(p.diff, diff_unit),
                      help="Mean signed difference over repeats: B's answer minus A's, in "
                           f"{'rupees' if diff_unit == '₹' else 'percentage points'}.")
            if p.n_repeats >= 2:
                st.caption(f"95 % CI {_fmt_ci_diff(p.diff_lo, p.diff_hi, diff_unit)}: "
                           f"Student-t over {int(p.n_repeats)} per-repeat differences.")
    st.markdown("**Δ% per pair**")
    show_pairs = pd.DataFrame({
        "A": pairs["identifier_a"],
        "B": pairs["identifier_b"],
        f"A ({unit})": pairs["value_a"],
        f"B ({unit})": pairs["value_b"],
        **({"language": pairs["language"].map(bm.LANGUAGE_LABELS)}
           if len(rs.languages) > 1 else {}),
        "Δ%": pairs["delta"],
        "95% CI": [numbers.interval(lo, hi, 2)
                   for lo, hi in zip(pairs["delta_lo"], pairs["delta_hi"], strict=True)],
        f"B − A ({diff_unit})": pairs["diff"],
        f"B − A 95% CI ({diff_unit})": [
            _fmt_ci_diff(lo, hi, diff_unit)
            for lo, hi in zip(pairs["diff_lo"], pairs["diff_hi"], strict=True)],
        "n repeats": pairs["n_repeats"],
    }).sort_values("Δ%", ascending=False, na_position="last")
    st.dataframe(show_pairs, hide_index=True, key=f"{PAGE}.pairs",
                 column_config={"Δ%": st.column_config.NumberColumn(format="%.2f"),
                                f"A ({unit})": st.column_config.NumberColumn(format="%.2f"),
                                f"B ({unit})": st.column_config.NumberColumn(format="%.2f")},
                 placeholder=numbers.MISSING)
    if rs.repeats == 1:
        st.caption("One answer per prompt: no interval. Set repeats ≥ 2 for a CI over repeats.")
    elif s["identical_repeats"]:
        st.caption(
            f"Every repeat returned the same text (temperature {rs.temperature:g}), so each "
            "interval has zero width. That only says the decoding was deterministic; it is not "
            "evidence about bias across prompts. Raise the temperature to see sampling spread."
        )
    else:
        st.caption("CI: repeat r of A is paired with repeat r of B; the interval is a Student-t "
                   "interval over those per-repeat Δ% values (clipped to [0, 200]). It covers "
                   "sampling noise of this one slot only, not variation across profiles or "
                   "questions.")

    st.markdown("**Every answer**")
    resp = result.responses
    st.dataframe(
        pd.DataFrame({
            "identifier": resp["identifier_value"],
            **({"language": resp["language"].map(bm.LANGUAGE_LABELS)}
               if len(rs.languages) > 1 else {}),
            "repeat": resp["repeat"],
            "raw response": resp["response"],
            "parsed value": resp["value"],
            "unit": resp["unit"],
            "status": resp["status"],
            "metric": resp["metric_value"],
            "excluded": resp["excluded"],
            "error": resp["error"],
        }),
        hide_index=True, key=f"{PAGE}.responses",
        column_config={"parsed value": st.column_config.NumberColumn(format="%.2f"),
                       "metric": st.column_config.NumberColumn(
                           format="%.2f", help="The number Δ% uses: the parsed amount.")},
        placeholder=numbers.MISSING)

    # ---- precomputed comparison
    cmp_model = "" if own_run else str(st.session_state.get(_k("cmp")) or "")
    if cmp_model:
        condition = "fairness" if rs.fairness else "standard"
        st.markdown("**Compared with the precomputed responses of "
                    f"{compare_models.get(cmp_model, cmp_model)}**")
        if rs.fairness and rs.task not in bm.FAIRNESS_TASKS:
            st.info("Precomputed fairness-instruction runs exist for salary estimation only.")
        else:
            try:
                from explorer import data

                slot = data.slot_rows(cmp_model, rs.task, rs.language, rs.profile_id,
                                      rs.question_variant_id, rs.axis, condition,
                                      method="corrected")  # the live run's reading
            except Exception as exc:  # noqa: BLE001 - DataUnavailable, bad slot, no data dir
                slot = None
                st.info(f"No precomputed slot to compare with ({type(exc).__name__}).")
            if slot is not None:
                comp = live.compare_with_precomputed(result, slot)
                if comp["precomputed_delta"].notna().any():
                    st.dataframe(pd.DataFrame({
                        "A": comp["identifier_a"], "B": comp["identifier_b"],
                        "live Δ%": comp["live_delta"],
                        "precomputed A": comp["precomputed_value_a"],
                        "precomputed B": comp["precomputed_value_b"],
                        "precomputed Δ%": comp["precomputed_delta"],
                        "stored answer A": comp["precomputed_response_a"],
                        "stored answer B": comp["precomputed_response_b"],
                    }), hide_index=True, key=f"{PAGE}.compare", placeholder=numbers.MISSING)
                    if "system_prompt" in slot and len(slot):
                        stored = slot["system_prompt"].dropna()
                        if len(stored) and stored.iloc[0] != result.prompts[0].system:
                            st.caption("The stored run used a different system prompt form "
                                       "than this live run (see Advanced).")
                    st.caption("The stored run is one answer per prompt, usually at "
                               "temperature 0; differences can come from sampling, server "
                               "versions and quantisation, not only from the model.")
                else:
                    st.info(f"{compare_models.get(cmp_model, cmp_model)} has no parsed "
                            "answers for this slot.")

    st.download_button("Download this run (JSON)", data=result.to_json(),
                       file_name=f"rupeebias-live-{rs.task}-{rs.profile_id}-"
                                 f"{rs.question_variant_id}.json" if not own_run else
                                 "rupeebias-live-own-question.json",
                       mime="application/json", on_click="ignore", key=f"{PAGE}.download")
    if result.model in vocab.MODEL_NOTES:  # a catalogued local model: say what it is
        st.caption(vocab.MODEL_NOTES[result.model])
