"""The generated module matches the schema, and both clients expose every method."""

from __future__ import annotations

import importlib.util
import inspect
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import CLIENTS_DIR, REPO_ROOT

import rewind_client
from rewind_client import AsyncRewindClient, RewindClient

SCHEMA_PATH = REPO_ROOT / "schema" / "rewind-protocol.json"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_py", CLIENTS_DIR / "gen_py.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    if not SCHEMA_PATH.is_file():
        pytest.skip("schema/rewind-protocol.json not found (not in the repository)")
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def test_committed_code_matches_the_generator(schema: dict[str, Any]) -> None:
    generated: dict[str, str] = load_generator().generate(schema)
    assert generated, "generator produced nothing"
    for rel, text in generated.items():
        committed = CLIENTS_DIR / rel
        assert committed.is_file(), f"clients/{rel} missing: run python3 clients/generate.py"
        assert committed.read_text(encoding="utf-8") == text, (
            f"clients/{rel} differs from the generator's output: "
            "run python3 clients/generate.py"
        )
    assert load_generator().generate(schema) == generated  # deterministic


def test_typed_dicts_follow_the_schema(schema: dict[str, Any]) -> None:
    for name, definition in schema["$defs"].items():
        model = getattr(rewind_client, name)
        if "properties" not in definition and definition.get("type") != "object":
            continue  # an enum alias
        properties = set(definition.get("properties", {}))
        required = set(definition.get("required", []))
        assert model.__required_keys__ == required, name
        assert model.__optional_keys__ == properties - required, name


def test_every_method_on_both_clients(schema: dict[str, Any]) -> None:
    for method, spec in schema["methods"].items():
        for cls in (RewindClient, AsyncRewindClient):
            fn = getattr(cls, method)
            assert inspect.iscoroutinefunction(fn) == (cls is AsyncRewindClient), method
            parameters = inspect.signature(fn).parameters
            assert parameters["timeout"].kind is inspect.Parameter.KEYWORD_ONLY
            if spec["params"] is None:
                assert "params" not in parameters, method
            elif spec["paramsRequired"]:
                assert parameters["params"].default is inspect.Parameter.empty, method
            else:
                assert parameters["params"].default is None, method
    for notification in schema["notifications"]:
        assert callable(getattr(RewindClient, f"on_{notification}"))
        assert callable(getattr(AsyncRewindClient, f"on_{notification}"))


def test_generated_header() -> None:
    text = (CLIENTS_DIR / "python" / "rewind_client" / "_generated.py").read_text("utf-8")
    assert text.startswith(
        "# generated from schema/rewind-protocol.json by clients/generate.py — do not edit\n"
    )


def test_generator_rejects_what_it_cannot_map(schema: dict[str, Any]) -> None:
    gen = load_generator()
    broken = json.loads(json.dumps(schema))
    broken["$defs"]["Scope"] = {"type": "string", "pattern": "^x$"}
    with pytest.raises(gen.SchemaError):
        gen.generate(broken)
