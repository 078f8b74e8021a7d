"""fingerprint / inspect on directories: the spec's vectors, the
pure-Python reference on generated trees, settings and errors."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any, Dict, List

import pytest

import fpcheck
from conftest import reference, write_tree


def cases(vectors: Dict[str, Any]) -> List[Dict[str, Any]]:
    found: List[Dict[str, Any]] = vectors["cases"]
    return found


def test_every_spec_vector_through_fingerprint_and_inspect(
    tmp_path: Path, vectors: Dict[str, Any]
) -> None:
    assert len(cases(vectors)) >= 20
    for case in cases(vectors):
        root = tmp_path / case["name"]
        write_tree(root, case["files"])
        exclude = case.get("exclude")
        got = fpcheck.fingerprint(root, exclude=exclude)
        assert got == case["fingerprint"], case["name"]
        seen = fpcheck.inspect(str(root), exclude=exclude)
        if case["unavailable"]:
            assert seen["fingerprint"] is None, case["name"]
            assert seen["unavailable_reason"], case["name"]
        else:
            assert seen["fingerprint"] == case["fingerprint"], case["name"]
            assert seen["files"] == case["selected"], case["name"]
            assert seen["unavailable_reason"] is None


def random_tree(rng: random.Random) -> Dict[str, Any]:
    names = [
        "a",
        "b",
        "Z",
        "é",
        "plugins",
        "tests",
        "scripts",
        "x-y",
        "__init__",
        "lib",
    ]
    exts = [".py", ".py", ".py", ".txt", ".pyc", ".md"]
    files: Dict[str, Any] = {}
    for _ in range(rng.randint(1, 40)):
        depth = rng.randint(0, 3)
        parts = [rng.choice(names) for _ in range(depth)]
        name = rng.choice(names) + rng.choice(exts)
        rel = "/".join(parts + [name])
        if any(rel.startswith(k + "/") or k.startswith(rel + "/") for k in files):
            continue
        body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
        files[rel] = {"hex": body.hex()}
    return files


def test_equals_the_reference_on_generated_trees(tmp_path: Path) -> None:
    rng = random.Random(15)
    compared = 0
    for i in range(40):
        root = tmp_path / f"t{i}"
        write_tree(root, random_tree(rng))
        expected = reference(root)
        assert fpcheck.fingerprint(root) == expected, i
        compared += expected != ""
    assert compared >= 20  # most trees have runtime files


def test_settings_replace_the_defaults(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "a", "tests/t.py": "t", "b.pyx": "b"})
    assert fpcheck.fingerprint(tmp_path) == reference(tmp_path)
    everything = fpcheck.inspect(tmp_path, exclude=[])
    assert everything["files"] == ["a.py", "tests/t.py"]
    assert everything["fingerprint"] == reference(tmp_path, "--exclude", "")
    both = fpcheck.inspect(tmp_path, extensions=["py", ".pyx"])
    assert both["files"] == ["a.py", "b.pyx"]
    assert both["fingerprint"] == reference(tmp_path, "--ext", ".py,.pyx")


def test_unavailable_is_an_empty_string_not_an_error(tmp_path: Path) -> None:
    assert fpcheck.fingerprint(tmp_path / "missing") == ""
    write_tree(tmp_path / "empty", {"README.md": "x"})
    assert fpcheck.fingerprint(tmp_path / "empty") == ""
    fifo_root = tmp_path / "fifo"
    write_tree(fifo_root, {"a.py": "a"})
    os.mkfifo(fifo_root / "b.py")
    assert fpcheck.fingerprint(fifo_root) == ""
    seen = fpcheck.inspect(fifo_root)
    assert seen["fingerprint"] is None and "b.py" in seen["unavailable_reason"]


def test_bad_settings_raise_config_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "a"})
    with pytest.raises(
        fpcheck.ConfigError, match=r"contains `/` \(given with exclude\)"
    ):
        fpcheck.fingerprint(tmp_path, exclude=["a/b"])
    with pytest.raises(fpcheck.ConfigError, match="comma"):
        fpcheck.fingerprint(tmp_path, exclude=["a,b"])
    # Settings are named as this package's keywords, never as CLI flags.
    with pytest.raises(
        fpcheck.ConfigError, match=r'pass extensions=\["\.py"\] \(or'
    ) as no_ext:
        fpcheck.fingerprint(tmp_path, extensions=[])
    assert "--ext" not in str(no_ext.value)
    assert issubclass(fpcheck.ConfigError, fpcheck.FpcheckError)
    with pytest.raises(TypeError):
        fpcheck.fingerprint(tmp_path, exclude="tests")  # a str is not a list of names
    with pytest.raises(TypeError):
        fpcheck.fingerprint(42)  # type: ignore[arg-type]
