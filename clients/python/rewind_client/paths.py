"""Project paths whose file names are not UTF-8.

They travel as strings in which each byte of an invalid sequence is the private-use character
U+F700 + byte (U+F780-U+F7FF); a name that really holds such a character has each byte of its
UTF-8 encoding written that way (docs/protocol.md, "File names that are not UTF-8").
"""

from __future__ import annotations


def _is_escape(cp: int) -> bool:
    return 0xF780 <= cp <= 0xF7FF


def decode_path(path: str) -> bytes:
    """The bytes a project path names on disk (use with ``os.fsdecode`` for a str path)."""
    out = bytearray()
    for ch in path:
        cp = ord(ch)
        if _is_escape(cp):
            out.append(cp - 0xF700)
        else:
            out += ch.encode("utf-8")
    return bytes(out)


def encode_path(name: bytes) -> str:
    """The project-path string for a file name given as bytes (inverse of decode_path)."""
    out: list[str] = []
    # surrogateescape turns each byte of an invalid sequence into U+DC80 + (byte - 0x80).
    for ch in name.decode("utf-8", "surrogateescape"):
        cp = ord(ch)
        if 0xDC80 <= cp <= 0xDCFF:
            out.append(chr(0xF700 + cp - 0xDC00))
        elif _is_escape(cp):
            out.extend(chr(0xF700 + b) for b in ch.encode("utf-8"))
        else:
            out.append(ch)
    return "".join(out)
