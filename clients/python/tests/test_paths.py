"""The lossless path encoding for file names that are not UTF-8 (docs/protocol.md)."""

from __future__ import annotations

import os

from rewind_client import decode_path, encode_path


def test_utf8_names_are_unchanged_and_others_round_trip() -> None:
    assert encode_path("src/é.rs".encode()) == "src/é.rs"
    assert encode_path(b"caf\xe9.txt") == "caf\uf7e9.txt"
    assert decode_path("caf\uf7e9.txt") == b"caf\xe9.txt"
    real = "x\uf7e9".encode()
    assert len(encode_path(real)) == 4
    assert decode_path(encode_path(real)) == real
    for n in range(2000):
        raw = os.urandom(n % 13)
        assert decode_path(encode_path(raw)) == raw
