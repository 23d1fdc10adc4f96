#!/usr/bin/env python3
"""Generate the TypeScript and Python client code from schema/rewind-protocol.json.

    python3 clients/generate.py          # write the generated files
    python3 clients/generate.py --check  # exit 1 if a committed file differs

Python 3.11 standard library only, so it runs offline. The schema itself is
generated from the Rust protocol types (`rewind schema`); `.ci/run` checks
both steps for drift, so a protocol change cannot land without its clients.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_py  # noqa: E402
import gen_ts  # noqa: E402


def outputs(schema: dict) -> dict[str, str]:
    """Every generated file, by path relative to clients/."""
    out: dict[str, str] = {}
    for generator in (gen_ts, gen_py):
        for rel, text in generator.generate(schema).items():
            if rel in out:
                raise SystemExit(f"two generators write clients/{rel}")
            out[rel] = text
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument(
        "--schema",
        type=pathlib.Path,
        default=HERE.parent / "schema" / "rewind-protocol.json",
    )
    args = parser.parse_args()
    schema = json.loads(args.schema.read_text(encoding="utf-8"))
    drift = []
    for rel, text in sorted(outputs(schema).items()):
        path = HERE / rel
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                drift.append(rel)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for rel in drift:
        print(f"clients/{rel} differs from what schema/ generates: run python3 clients/generate.py")
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
