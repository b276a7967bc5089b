"""What a run says about itself: redacted config, provenance, and which rank writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from trainwire.contract.models import Provenance
from trainwire.writer.provenance import collect_provenance
from trainwire.writer.rank import global_rank
from trainwire.writer.redaction import REDACTED, redact_config


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")


def test_secret_keys_are_redacted_at_any_depth() -> None:
    config = {
        "HF_TOKEN": "hf_x",
        "lr": 0.1,
        "db": {"Password": "pw", "host": "h", "auth": {"user": "u"}},
        "callbacks": [{"api_key": "k", "name": "wandb"}, ("passwd", {"client_secret": "s"})],
        "aws_access_key_id": "a",
        "ssh_private_key": "p",
        "credentials_path": "c",
        "apikey": "z",
    }
    assert redact_config(config) == {
        "HF_TOKEN": REDACTED,
        "lr": 0.1,
        "db": {"Password": REDACTED, "host": "h", "auth": REDACTED},
        "callbacks": [{"api_key": REDACTED, "name": "wandb"}, ["passwd", {"client_secret": REDACTED}]],
        "aws_access_key_id": REDACTED,
        "ssh_private_key": REDACTED,
        "credentials_path": REDACTED,
        "apikey": REDACTED,
    }


def test_values_that_are_not_json_become_strings_and_nothing_raises() -> None:
    cyclic: dict[str, Any] = {"name": "loop"}
    cyclic["self"] = cyclic
    config = {Path("key"): Path("/data"), 3: {1, 2}, "bad": Unprintable(), "loop": cyclic, "nan": float("nan")}
    redacted = redact_config(config)
    assert redacted["key"] == str(Path("/data")) and redacted["3"] == "{1, 2}"
    assert redacted["bad"] == "<unprintable Unprintable>"
    json.dumps(redacted)  # finite part JSON-able, cycle cut
    assert redacted["nan"] != redacted["nan"]  # kept: the encoder writes it as null


def test_objects_with_to_dict_or_attributes_are_configs_too() -> None:
    class Arguments:
        def to_dict(self) -> dict[str, Any]:
            return {"output_dir": "out", "hub_token": "t"}

    assert redact_config(Arguments()) == {"output_dir": "out", "hub_token": REDACTED}
    assert redact_config(types.SimpleNamespace(secret="s", steps=3)) == {"secret": REDACTED, "steps": 3}
    assert redact_config(42) == {}  # nothing to read: left out, with a warning


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_provenance_in_a_git_work_tree(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.fail("git is needed for this test")
    git(tmp_path, "init", "-q")
    (tmp_path / "train.py").write_text("print(1)\n")
    git(tmp_path, "add", "train.py")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
    clean = collect_provenance(seed=42, cwd=tmp_path)
    (tmp_path / "train.py").write_text("print(2)\n")
    dirty = collect_provenance(cwd=tmp_path)

    assert clean["git_sha"] == git(tmp_path, "rev-parse", "HEAD") and clean["git_dirty"] is False
    assert dirty["git_dirty"] is True and "seed" not in dirty
    assert clean["seed"] == 42 and clean["python"].count(".") == 2
    assert clean["packages"]["pydantic"] and "trainwire" in clean["packages"]
    assert list(clean)[:3] == ["git_sha", "git_dirty", "seed"]
    Provenance.model_validate(clean, strict=True)


def test_provenance_outside_a_work_tree_and_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = collect_provenance(cwd=tmp_path)
    assert outside["git_sha"] is None and outside["git_dirty"] is None
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on the PATH
    without_git = collect_provenance(cwd=tmp_path)
    assert "git_sha" not in without_git and "git_dirty" not in without_git and without_git["platform"]


def printed_json(script: str, cwd: Path) -> Any:
    """What `script`, run by a fresh interpreter (nothing imported yet), prints as JSON."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=180, check=True, cwd=cwd)
    return json.loads(done.stdout)


def test_provenance_reads_no_accelerator_and_imports_no_torch_when_torch_is_not_loaded(tmp_path: Path) -> None:
    script = (
        "import json, sys\n"
        "from trainwire.writer.run import Run\n"
        "from trainwire.writer.provenance import collect_provenance\n"
        "provenance = collect_provenance()\n"
        "print(json.dumps({'provenance': provenance, 'torch': 'torch' in sys.modules}))\n"
    )
    result = printed_json(script, tmp_path)
    assert result == {"provenance": result["provenance"], "torch": False}
    assert "accelerator" not in result["provenance"]


def test_the_provenance_prefetch_imports_torch_off_the_calling_thread_to_read_the_accelerator(tmp_path: Path) -> None:
    script = (
        "import builtins, json, sys, threading\n"
        "importers = []\n"
        "plain_import = builtins.__import__\n"
        "def recording_import(name, *args, **kwargs):\n"
        "    if name == 'torch' and 'torch' not in sys.modules:\n"
        "        importers.append(threading.current_thread().name)\n"
        "    return plain_import(name, *args, **kwargs)\n"
        "builtins.__import__ = recording_import\n"
        "from trainwire.writer.provenance import ProvenancePrefetch\n"
        "provenance = ProvenancePrefetch().result(timeout_s=120)\n"
        "print(json.dumps({'accelerator': provenance['accelerator'], 'importers': importers}))\n"
    )
    result = printed_json(script, tmp_path)
    assert result["importers"] == ["trainwire-provenance"]
    Provenance.model_validate({"accelerator": result["accelerator"]}, strict=True)
    assert result["accelerator"]["count"] >= 1


def test_the_provenance_prefetch_reads_no_accelerator_when_torch_is_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwire.writer.provenance import ProvenancePrefetch

    monkeypatch.setitem(sys.modules, "torch", None)  # what an environment without torch looks like to importlib
    provenance = ProvenancePrefetch().result(timeout_s=60)
    assert provenance is not None and "accelerator" not in provenance and provenance["python"]


def test_provenance_reads_the_accelerator_from_a_loaded_torch() -> None:
    import torch

    accelerator = collect_provenance()["accelerator"]
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert accelerator["kind"] == expected and accelerator["count"] >= 1
    assert accelerator.get("cuda_version") == torch.version.cuda  # absent from a build without CUDA


def test_rank_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    assert global_rank() == 0
    monkeypatch.setenv("RANK", "2")
    assert global_rank() == 2
    monkeypatch.setenv("RANK", "not-a-number")
    assert global_rank() == 0


def test_rank_comes_from_an_initialised_process_group_first(monkeypatch: pytest.MonkeyPatch) -> None:
    group = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: True, get_rank=lambda: 5)
    monkeypatch.setitem(sys.modules, "torch.distributed", group)
    monkeypatch.setenv("RANK", "1")
    assert global_rank() == 5
    group.is_initialized = lambda: False
    assert global_rank() == 1


def test_rank_of_a_real_process_group_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch.distributed as dist

    monkeypatch.setenv("RANK", "7")
    # a file store: no port that another test could be using
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        assert global_rank() == 0
    finally:
        dist.destroy_process_group()


def test_prefetched_provenance_equals_collected_and_places_the_seed_after_git(tmp_path) -> None:
    from trainwire.writer.provenance import ProvenancePrefetch, collect_provenance

    prefetch = ProvenancePrefetch(cwd=tmp_path)
    found = prefetch.result(seed=7)
    assert found == collect_provenance(seed=7, cwd=tmp_path)
    keys = list(found)
    assert keys.index("seed") == sum(1 for key in keys if key.startswith("git_"))
    assert "seed" not in prefetch.result()
