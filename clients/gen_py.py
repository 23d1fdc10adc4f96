"""Python half of the client generator (Python 3.11 standard library only).

``generate(schema)`` takes the parsed ``schema/rewind-protocol.json`` and returns
``{path relative to clients/: file contents}``; clients/generate.py writes the files (or,
with ``--check``, compares them with the committed ones).

What it emits (``python/rewind_client/_generated.py``):

* one ``TypedDict`` per object type in ``$defs`` (wire names kept exactly). Types reachable
  from a method's params are written ``total=False`` with ``Required[...]`` on the required
  keys; all others (results, notifications) are total with ``NotRequired[...]`` on the keys
  the schema does not require. Nullable keys get ``| None``.
* a ``Literal[...]`` type alias per enum (``enum`` or ``oneOf`` of ``const`` strings);
* ``SyncMethods`` / ``AsyncMethods``: one typed method per protocol method (snake_case, as
  on the wire) and one ``on_<notification>`` subscription per notification, to be mixed
  into the hand-written clients which provide ``_call`` and ``_subscribe``;
* ``PROTOCOL_VERSION``, ``METHOD_NAMES``, ``NOTIFICATION_NAMES``, ``ERROR_CODES``.

The output is deterministic: types in dependency order (ties broken by name), properties in
schema order, methods and notifications sorted by name. A schema construct the generator
cannot map faithfully raises ``SchemaError`` rather than degrading to ``Any``.
"""

from __future__ import annotations

import json
import keyword
import re
from typing import Any

HEADER = "# generated from schema/rewind-protocol.json by clients/generate.py — do not edit\n"

OUT_PATH = "python/rewind_client/_generated.py"

_REF = "#/$defs/"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Names the generated module defines or imports itself; a $defs type may not reuse them.
_MODULE_NAMES = frozenset(
    """
    Any Awaitable Callable Final Literal Mapping NotRequired Required TypeAlias TypedDict
    cast JsonValue SyncMethods AsyncMethods PROTOCOL_VERSION METHOD_NAMES
    NOTIFICATION_NAMES ERROR_CODES
    """.split()
)

# Members of the hand-written clients (rewind_client/client.py, aio.py) that a generated
# method must not shadow.
_RESERVED_MEMBERS = frozenset(
    """
    close kill start spawn pid returncode closed stderr_tail command on_notification
    request notify
    """.split()
)

_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
}

# Keywords that carry no type information and may appear anywhere.
_ANNOTATION_KEYS = frozenset(
    {"description", "title", "format", "minimum", "maximum", "default", "examples",
     "$comment", "deprecated", "readOnly", "writeOnly"}
)


class SchemaError(ValueError):
    """The schema uses a construct the generator cannot map faithfully."""


# --------------------------------------------------------------------------- helpers


def _ref_name(ref: str) -> str:
    if not ref.startswith(_REF):
        raise SchemaError(f"unsupported $ref {ref!r} (only {_REF}... is supported)")
    return ref[len(_REF):]


def _lit(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (str, int)):
        return json.dumps(value)
    raise SchemaError(f"unsupported literal {value!r}")


def _union(parts: list[str]) -> str:
    seen: list[str] = []
    for part in parts:
        for piece in _split_union(part):
            if piece not in seen:
                seen.append(piece)
    has_none = "None" in seen
    seen = [p for p in seen if p != "None"]
    # Merge several Literal[...] members into one.
    literals = [p for p in seen if p.startswith("Literal[")]
    if len(literals) > 1:
        merged = "Literal[" + ", ".join(p[len("Literal["):-1] for p in literals) + "]"
        first = seen.index(literals[0])
        seen = [p for p in seen if not p.startswith("Literal[")]
        seen.insert(first, merged)
    if has_none:
        seen.append("None")
    if not seen:
        raise SchemaError("empty union")
    return " | ".join(seen)


def _split_union(expr: str) -> list[str]:
    """Split a union expression on top-level ``|``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(expr[start:i].strip())
            start = i + 1
    parts.append(expr[start:].strip())
    return parts


def _const_strings(members: list[Any]) -> list[str] | None:
    """The values when every member is a string ``const`` (an enum written as oneOf)."""
    values = []
    for m in members:
        if not isinstance(m, dict) or "const" not in m or not isinstance(m["const"], str):
            return None
        values.append(m["const"])
    return values


def _refs(schema: Any) -> set[str]:
    """Every $defs name a schema refers to, directly or through nesting."""
    out: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                out.add(_ref_name(value))
            else:
                out |= _refs(value)
    elif isinstance(schema, list):
        for item in schema:
            out |= _refs(item)
    return out


def _check_keys(schema: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = set(schema) - allowed - _ANNOTATION_KEYS
    if unknown:
        raise SchemaError(f"{where}: unsupported keyword(s) {sorted(unknown)}")


class _TypeMapper:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def expr(self, schema: Any, where: str) -> str:
        """The Python type expression of a (sub)schema."""
        if schema is True or schema == {}:
            return "JsonValue"
        if not isinstance(schema, dict):
            raise SchemaError(f"{where}: unsupported schema {schema!r}")
        if "$ref" in schema:
            _check_keys(schema, {"$ref"}, where)
            name = _ref_name(schema["$ref"])
            if name not in self.defs:
                raise SchemaError(f"{where}: dangling $ref {schema['$ref']!r}")
            return name
        for key in ("anyOf", "oneOf"):
            if key in schema:
                _check_keys(schema, {key, "type"}, where)
                members = schema[key]
                consts = _const_strings(members)
                if consts is not None:
                    return "Literal[" + ", ".join(_lit(v) for v in consts) + "]"
                return _union([self.expr(m, f"{where}.{key}[{i}]") for i, m in enumerate(members)])
        if "const" in schema:
            _check_keys(schema, {"const", "type"}, where)
            return f"Literal[{_lit(schema['const'])}]"
        if "enum" in schema:
            _check_keys(schema, {"enum", "type"}, where)
            values = schema["enum"]
            parts = [f"Literal[{_lit(v)}]" for v in values if v is not None]
            if None in values:
                parts.append("None")
            return _union(parts)
        t = schema.get("type")
        if isinstance(t, list):
            return _union([self.expr(_narrow(schema, x), where) for x in t])
        if t in _SCALARS:
            _check_keys(schema, {"type"}, where)
            return _SCALARS[t]
        if t == "array":
            _check_keys(schema, {"type", "items", "minItems", "maxItems", "uniqueItems"}, where)
            return f"list[{self.expr(schema.get('items', True), where + '.items')}]"
        if t == "object":
            _check_keys(schema, {"type", "additionalProperties"}, where)
            extra = schema.get("additionalProperties", True)
            if extra is False:
                return "dict[str, None]"  # an object that may hold nothing
            return f"dict[str, {self.expr(extra, where + '.additionalProperties')}]"
        if t is None and not (set(schema) - _ANNOTATION_KEYS):
            return "JsonValue"
        raise SchemaError(f"{where}: unsupported schema {json.dumps(schema)[:200]}")


_ARRAY_KEYS = frozenset({"items", "minItems", "maxItems", "uniqueItems"})
_OBJECT_KEYS = frozenset({"additionalProperties"})


def _narrow(schema: dict[str, Any], t: str) -> dict[str, Any]:
    """One member of a ``"type": [...]`` list, with the keywords that apply to it."""
    drop = (_ARRAY_KEYS if t != "array" else set()) | (_OBJECT_KEYS if t != "object" else set())
    return {**{k: v for k, v in schema.items() if k not in drop}, "type": t}


def _comment_lines(text: str, indent: str) -> list[str]:
    return [f"{indent}#: {line}".rstrip() for line in text.strip().splitlines()]


def _docstring(text: str, indent: str) -> list[str]:
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = body.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    out = [f'{indent}"""{lines[0]}']
    out += [f"{indent}{line}".rstrip() for line in lines[1:]]
    out.append(f'{indent}"""')
    return out


def _is_object_def(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and (schema.get("type") == "object" or "properties" in schema)
        and not any(k in schema for k in ("anyOf", "oneOf", "enum", "const", "$ref"))
        and ("properties" in schema or schema.get("additionalProperties", True) in (True, False))
    )


# --------------------------------------------------------------------------- generate


def generate(schema: dict[str, Any]) -> dict[str, str]:
    """Map output paths (relative to clients/) to their generated contents."""
    defs: dict[str, Any] = schema.get("$defs") or {}
    methods: dict[str, Any] = schema.get("methods") or {}
    notifications: dict[str, Any] = schema.get("notifications") or {}
    mapper = _TypeMapper(defs)

    for name in defs:
        if not _IDENT.match(name) or keyword.iskeyword(name) or name in _MODULE_NAMES:
            raise SchemaError(f"$defs name {name!r} cannot be a Python type name")
    for name in list(methods) + [f"on_{n}" for n in notifications]:
        if not _IDENT.match(name) or keyword.iskeyword(name) or name.startswith("_"):
            raise SchemaError(f"{name!r} cannot be a Python method name")
        if name in _RESERVED_MEMBERS:
            raise SchemaError(f"method {name!r} would shadow a hand-written client member")

    # Which types are inputs (reachable from params): written total=False + Required.
    def closure(roots: set[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo.extend(_refs(defs[n]))
        return seen

    param_roots: set[str] = set()
    for spec in methods.values():
        if spec.get("params") is not None:
            param_roots |= _refs(spec["params"])
    inputs = closure(param_roots)

    # Where each type is used directly, for the docstrings.
    usage: dict[str, list[str]] = {}
    for mname in sorted(methods):
        spec = methods[mname]
        for role in ("params", "result"):
            if spec.get(role) is not None:
                for n in sorted(_refs(spec[role])):
                    usage.setdefault(n, []).append(f"{role} of ``{mname}``")
    for nname in sorted(notifications):
        for n in sorted(_refs(notifications[nname].get("params"))):
            usage.setdefault(n, []).append(f"params of the ``{nname}`` notification")

    # Dependency order (depth-first, ties by name); a cycle falls back to a quoted name.
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(n: str) -> None:
        if state.get(n) == 2 or state.get(n) == 1:
            return
        state[n] = 1
        for dep in sorted(_refs(defs[n])):
            visit(dep)
        state[n] = 2
        order.append(n)

    for n in sorted(defs):
        visit(n)

    defined: set[str] = set()

    def annotation(expr: str) -> str:
        """Quote an annotation that names a type not defined yet (a cycle)."""
        names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)) & set(defs)
        if names - defined:
            return json.dumps(expr)
        return expr

    out: list[str] = [
        HEADER.rstrip("\n"),
        '"""Typed models and methods of the rewind protocol (see schema/rewind-protocol.json)."""',
        "",
    ]
    out += [
        "from collections.abc import Awaitable, Callable, Mapping",
        "from typing import Any, Final, Literal, NotRequired, Required, TypeAlias, TypedDict, cast",
        "",
        "#: Any JSON value (free-form ``data`` / ``input`` fields).",
        "JsonValue: TypeAlias = Any",
        "",
        f"PROTOCOL_VERSION: Final = {int(schema.get('protocolVersion', 1))}",
        "",
    ]

    exported: list[str] = ["JsonValue", "PROTOCOL_VERSION"]

    for name in order:
        d = defs[name]
        where = f"$defs/{name}"
        doc_parts = []
        if isinstance(d, dict) and d.get("description"):
            doc_parts.append(d["description"].strip())
        if name in usage:
            doc_parts.append("Used as: " + "; ".join(usage[name]) + ".")
        out.append("")
        if _is_object_def(d):
            _check_keys(d, {"type", "properties", "required", "additionalProperties"}, where)
            props: dict[str, Any] = d.get("properties") or {}
            required = set(d.get("required") or [])
            missing = required - set(props)
            if missing:
                raise SchemaError(f"{where}: required keys without properties {sorted(missing)}")
            is_input = name in inputs
            functional = any(not _IDENT.match(k) or keyword.iskeyword(k) for k in props)
            fields: list[tuple[str, str, str | None]] = []
            for key, sub in props.items():
                expr = annotation(mapper.expr(sub, f"{where}.{key}"))
                if is_input and key in required:
                    expr = f"Required[{expr}]"
                elif not is_input and key not in required:
                    expr = f"NotRequired[{expr}]"
                desc = sub.get("description") if isinstance(sub, dict) else None
                fields.append((key, expr, desc))
            total = "" if not is_input else ", total=False"
            if functional:
                if doc_parts:
                    out += _comment_lines("\n\n".join(doc_parts), "")
                out.append(f"{name} = TypedDict(")
                out.append(f"    {json.dumps(name)},")
                out.append("    {")
                for key, expr, desc in fields:
                    if desc:
                        out += _comment_lines(desc, "        ")
                    out.append(f"        {json.dumps(key)}: {expr},")
                out.append("    },")
                if is_input:
                    out.append("    total=False,")
                out.append(")")
            else:
                out.append(f"class {name}(TypedDict{total}):")
                if doc_parts:
                    out += _docstring("\n\n".join(doc_parts), "    ")
                for key, expr, desc in fields:
                    if desc:
                        out += _comment_lines(desc, "    ")
                    out.append(f"    {key}: {expr}")
                if not doc_parts and not fields:
                    out.append("    pass")
        else:
            expr = mapper.expr(d, where)
            if isinstance(d, dict):
                for key in ("oneOf", "anyOf"):
                    for m in d.get(key, []) if _const_strings(d.get(key, [])) is not None else []:
                        if m.get("description"):
                            doc_parts.append(f"{json.dumps(m['const'])}: {m['description'].strip()}")
            if doc_parts:
                out += _comment_lines("\n\n".join(doc_parts), "")
            out.append(f"{name}: TypeAlias = {annotation(expr)}")
        defined.add(name)
        exported.append(name)
        out.append("")

    # Constants.
    out.append("")
    out.append("#: Every protocol method, sorted.")
    out.append("METHOD_NAMES: Final[tuple[str, ...]] = (")
    out += [f"    {json.dumps(m)}," for m in sorted(methods)]
    out.append(")")
    out.append("")
    out.append("#: Every server-to-client notification, sorted.")
    out.append("NOTIFICATION_NAMES: Final[tuple[str, ...]] = (")
    out += [f"    {json.dumps(n)}," for n in sorted(notifications)]
    out.append(")")
    out.append("")
    out.append("#: Error codes the server uses, with their meaning.")
    out.append("ERROR_CODES: Final[Mapping[int, str]] = {")
    for code, meaning in sorted(((int(c), m) for c, m in (schema.get("errors") or {}).items())):
        out.append(f"    {code}: {json.dumps(meaning, ensure_ascii=False)},")
    out.append("}")
    out.append("")
    exported += ["METHOD_NAMES", "NOTIFICATION_NAMES", "ERROR_CODES"]

    # Method mixins.
    for is_async in (False, True):
        cls = "AsyncMethods" if is_async else "SyncMethods"
        exported.append(cls)
        adef = "async def" if is_async else "def"
        aw = "await " if is_async else ""
        out.append("")
        out.append(f"class {cls}:")
        out += _docstring(
            ("Typed protocol methods of the asyncio client " if is_async
             else "Typed protocol methods of the synchronous client ")
            + "(mixed into the hand-written\nclient, which provides ``_call`` and ``_subscribe``).",
            "    ",
        )
        out.append("")
        out.append("    __slots__ = ()")
        out.append("")
        out.append(f"    {adef} _call(")
        out.append("        self, method: str, params: Mapping[str, Any] | None, timeout: float | None")
        out.append("    ) -> Any:")
        out.append("        raise NotImplementedError")
        out.append("")
        out.append("    def _subscribe(")
        out.append("        self, method: str, callback: Callable[[Any], object]")
        out.append("    ) -> Callable[[], None]:")
        out.append("        raise NotImplementedError")
        for mname in sorted(methods):
            spec = methods[mname]
            where = f"methods/{mname}"
            result = mapper.expr(spec.get("result", True), where + ".result")
            params_schema = spec.get("params")
            out.append("")
            if params_schema is None:
                if spec.get("paramsRequired"):
                    raise SchemaError(f"{where}: paramsRequired without params")
                out.append(f"    {adef} {mname}(self, *, timeout: float | None = None) -> {result}:")
                call_params = "None"
            else:
                ptype = mapper.expr(params_schema, where + ".params")
                if spec.get("paramsRequired"):
                    sig = f"params: {ptype}"
                else:
                    sig = f"params: {_union([ptype, 'None'])} = None"
                out.append(f"    {adef} {mname}(")
                out.append(f"        self, {sig}, *, timeout: float | None = None")
                out.append(f"    ) -> {result}:")
                call_params = "params"
            doc = spec.get("summary") or ""
            extra = "\n\n``timeout`` (seconds) overrides the client's default for this call."
            out += _docstring(doc + extra, "        ")
            out.append(
                f"        return cast({json.dumps(result)}, "
                f"{aw}self._call({json.dumps(mname)}, {call_params}, timeout))"
            )
        for nname in sorted(notifications):
            spec = notifications[nname]
            where = f"notifications/{nname}"
            ptype = mapper.expr(spec.get("params", True), where + ".params")
            cb = f"Callable[[{ptype}], object]"
            if is_async:
                cb = f"Callable[[{ptype}], Awaitable[object] | object]"
            out.append("")
            out.append(f"    def on_{nname}(")
            out.append(f"        self, callback: {cb}")
            out.append("    ) -> Callable[[], None]:")
            doc = (spec.get("summary") or f"The ``{nname}`` notification.").strip()
            doc += (
                "\n\nRegister ``callback`` for this notification; it runs before the response of"
                "\nthe call that caused it is delivered. Returns a function that unregisters it."
            )
            if is_async:
                doc += "\nA callback returning an awaitable is awaited before reading on."
            out += _docstring(doc, "        ")
            out.append(f"        return self._subscribe({json.dumps(nname)}, callback)")
        out.append("")

    out.append("")
    out.append("__all__ = [")
    out += [f"    {json.dumps(n)}," for n in sorted(exported)]
    out.append("]")
    text = "\n".join(out).rstrip("\n") + "\n"
    # Collapse runs of blank lines to at most two.
    text = re.sub(r"\n{4,}", "\n\n\n", text)
    return {OUT_PATH: text}
