"""TypeScript half of the client generator (Python 3.11 standard library only).

``generate(schema)`` takes the parsed ``schema/rewind-protocol.json`` and returns
``{path relative to clients/: file contents}``. clients/generate.py writes the files (or,
with ``--check``, compares them with the committed ones).

The output is deterministic: types are emitted in sorted order, object properties in
sorted order, methods in sorted order. Any schema construct this generator does not
understand raises ``SchemaError`` instead of silently degrading to ``unknown``.
"""

from __future__ import annotations

import json
import re

HEADER = (
    "// generated from schema/rewind-protocol.json by clients/generate.py — do not edit\n"
)

OUT_PATH = "typescript/src/generated.ts"

_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")

# Member names a generated client method must not shadow: EventEmitter's API and the
# hand-written members of RewindClient (src/client.ts).
_RESERVED_MEMBERS = frozenset(
    """
    addListener emit eventNames getMaxListeners listenerCount listeners off on once
    prependListener prependOnceListener rawListeners removeAllListeners removeListener
    setMaxListeners constructor call request notify close kill exited pid closed
    """.split()
)
_REF = "#/$defs/"


class SchemaError(ValueError):
    """The schema uses a construct the generator cannot map faithfully."""


def camel(name: str) -> str:
    """snake_case method name -> camelCase client method name."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _prop_key(name: str) -> str:
    return name if _IDENT.match(name) else json.dumps(name)


def _doc(text: str | None, indent: str = "") -> list[str]:
    if not text:
        return []
    lines = text.replace("*/", "*\\/").strip().splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0].strip()} */"]
    out = [f"{indent}/**"]
    out += [f"{indent} * {line.strip()}".rstrip() for line in lines]
    out.append(f"{indent} */")
    return out


def _literal(value: object) -> str:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return json.dumps(value, ensure_ascii=False)
    raise SchemaError(f"unsupported literal {value!r}")


def _wrap(ts: str) -> str:
    """Parenthesise a union before appending [] to it."""
    return f"({ts})" if " | " in ts else ts


def _union(parts: list[str]) -> str:
    seen: list[str] = []
    for part in parts:
        for piece in _split_union(part):
            if piece not in seen:
                seen.append(piece)
    # keep `null` last for readability
    if "null" in seen:
        seen.remove("null")
        seen.append("null")
    return " | ".join(seen)


def _split_union(ts: str) -> list[str]:
    # Only top-level unions built by this module are split; they never nest parentheses
    # around a " | " except in `(A | B)[]`, which must stay whole.
    depth = 0
    pieces: list[str] = []
    cur = ""
    i = 0
    while i < len(ts):
        ch = ts[i]
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if depth == 0 and ts.startswith(" | ", i):
            pieces.append(cur)
            cur = ""
            i += 3
            continue
        cur += ch
        i += 1
    pieces.append(cur)
    return pieces


_SCALARS = {
    "string": "string",
    "integer": "number",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
}

# Keywords that only annotate or constrain a value without changing its TypeScript type.
_ANNOTATIONS = {
    "description",
    "format",
    "minimum",
    "maximum",
    "title",
    "default",
    "examples",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
}


class _Gen:
    def __init__(self, schema: dict) -> None:
        self.schema = schema
        self.defs: dict = schema.get("$defs", {})

    # -- type expressions -------------------------------------------------------------

    def ref_name(self, ref: str) -> str:
        if not ref.startswith(_REF):
            raise SchemaError(f"unsupported $ref {ref!r}")
        name = ref[len(_REF):]
        if name not in self.defs:
            raise SchemaError(f"$ref to missing definition {name!r}")
        if not _IDENT.match(name):
            raise SchemaError(f"definition name {name!r} is not a TypeScript identifier")
        return name

    def expr(self, s: object, where: str) -> str:
        """TypeScript type expression for an inline schema."""
        if s is True:
            return "unknown"
        if s is False:
            return "never"
        if not isinstance(s, dict):
            raise SchemaError(f"{where}: schema must be an object or boolean")
        if "$ref" in s:
            extra = set(s) - {"$ref"} - _ANNOTATIONS
            if extra:
                raise SchemaError(f"{where}: $ref with sibling keywords {sorted(extra)}")
            return self.ref_name(s["$ref"])
        if "const" in s:
            return _literal(s["const"])
        if "enum" in s:
            return _union([_literal(v) for v in s["enum"]])
        for key in ("anyOf", "oneOf"):
            if key in s:
                variants = s[key]
                if not isinstance(variants, list) or not variants:
                    raise SchemaError(f"{where}: empty {key}")
                return _union(
                    [self.expr(v, f"{where}.{key}[{i}]") for i, v in enumerate(variants)]
                )
        if "allOf" in s:
            raise SchemaError(f"{where}: allOf is not supported")
        t = s.get("type")
        if t is None:
            if set(s) - _ANNOTATIONS:
                raise SchemaError(f"{where}: schema without type: {sorted(s)}")
            return "unknown"
        types = t if isinstance(t, list) else [t]
        return _union([self.typed(s, ty, where) for ty in types])

    def typed(self, s: dict, ty: str, where: str) -> str:
        if ty in _SCALARS:
            return _SCALARS[ty]
        if ty == "array":
            items = s.get("items")
            if items is None:
                return "unknown[]"
            return _wrap(self.expr(items, f"{where}.items")) + "[]"
        if ty == "object":
            props = s.get("properties")
            if props:
                # An inline object type: emit a literal type.
                fields = self.fields(s, where, indent="")
                return "{ " + " ".join(fields) + " }"
            ap = s.get("additionalProperties")
            if isinstance(ap, dict):
                return f"Record<string, {self.expr(ap, where + '.additionalProperties')}>"
            return "Record<string, unknown>"
        raise SchemaError(f"{where}: unsupported type {ty!r}")

    def fields(self, s: dict, where: str, indent: str) -> list[str]:
        props: dict = s.get("properties", {})
        required = set(s.get("required", []))
        unknown_required = required - set(props)
        if unknown_required:
            raise SchemaError(f"{where}: required names unknown properties {sorted(unknown_required)}")
        out: list[str] = []
        for name in sorted(props):
            sub = props[name]
            opt = "" if name in required else "?"
            ts = self.expr(sub, f"{where}.{name}")
            if indent:
                out += _doc(sub.get("description") if isinstance(sub, dict) else None, indent)
                out.append(f"{indent}{_prop_key(name)}{opt}: {ts};")
            else:
                out.append(f"{_prop_key(name)}{opt}: {ts};")
        return out

    # -- declarations -----------------------------------------------------------------

    def declaration(self, name: str, s: object) -> list[str]:
        where = f"$defs.{name}"
        if not isinstance(s, dict):
            return [f"export type {name} = {self.expr(s, where)};"]
        out = _doc(s.get("description"))
        if s.get("type") == "object" and "properties" in s:
            out.append(f"export interface {name} {{")
            out += self.fields(s, where, indent="  ")
            ap = s.get("additionalProperties")
            if isinstance(ap, dict):
                out.append(f"  [key: string]: {self.expr(ap, where + '.additionalProperties')};")
            out.append("}")
            return out
        variants = s.get("oneOf") or s.get("anyOf")
        if variants and all(isinstance(v, dict) and "const" in v for v in variants):
            # A documented enum: keep each value's description.
            docs = [
                f"- {json.dumps(v['const'], ensure_ascii=False)}: {' '.join(v['description'].split())}"
                for v in variants
                if v.get("description")
            ]
            if docs:
                out = _doc("\n".join(filter(None, [s.get("description"), *docs])))
        out.append(f"export type {name} = {self.expr(s, where)};")
        return out

    # -- methods ----------------------------------------------------------------------

    def method_types(self, name: str, m: dict) -> tuple[str | None, str]:
        where = f"methods.{name}"
        params = m.get("params")
        p_ts = None if params is None else self.expr(params, where + ".params")
        if "result" not in m:
            raise SchemaError(f"{where}: no result schema")
        r_ts = self.expr(m["result"], where + ".result")
        return p_ts, r_ts

    def render(self) -> str:
        s = self.schema
        methods: dict = s.get("methods", {})
        notifications: dict = s.get("notifications", {})
        errors: dict = s.get("errors", {})
        out: list[str] = [HEADER.rstrip("\n"), ""]
        out.append('import { EventEmitter } from "node:events";')
        out.append('import type { CallOptions } from "./types.js";')
        out.append("")
        out.append(f"/** Protocol version this client was generated for (`{s.get('title', '')}`). */")
        out.append(f"export const PROTOCOL_VERSION = {int(s['protocolVersion'])} as const;")
        out.append("")

        out.append("/** Error codes of the protocol and what they mean. */")
        out.append("export const ERROR_CODES = {")
        for code in sorted(errors, key=lambda c: int(c)):
            out.append(f"  {json.dumps(str(int(code)))}: {json.dumps(errors[code], ensure_ascii=False)},")
        out.append("} as const;")
        out.append("")
        codes = sorted(int(c) for c in errors)
        out.append("/** A code from the protocol's error table. */")
        out.append(f"export type ProtocolErrorCode = {' | '.join(str(c) for c in codes) or 'never'};")
        out.append("")

        out.append("// ---- types ($defs) ----")
        out.append("")
        for name in sorted(self.defs):
            if not _IDENT.match(name):
                raise SchemaError(f"definition name {name!r} is not a TypeScript identifier")
            out += self.declaration(name, self.defs[name])
            out.append("")

        out.append("// ---- methods ----")
        out.append("")
        out.append("/** Every protocol method: its params (`undefined` when it takes none) and result. */")
        out.append("export interface MethodMap {")
        infos = []
        for name in sorted(methods):
            m = methods[name]
            if not isinstance(m.get("paramsRequired"), bool):
                raise SchemaError(f"methods.{name}: paramsRequired missing or not a boolean")
            if m.get("params") is None and m["paramsRequired"]:
                raise SchemaError(f"methods.{name}: paramsRequired without params")
            p_ts, r_ts = self.method_types(name, m)
            infos.append((name, m, p_ts, r_ts))
            out.append(f"  {_prop_key(name)}: {{")
            out.append(f"    params: {p_ts if p_ts is not None else 'undefined'};")
            out.append(f"    result: {r_ts};")
            out.append(f"    paramsRequired: {'true' if m['paramsRequired'] else 'false'};")
            out.append(f"    mutating: {'true' if m.get('mutating') else 'false'};")
            out.append("  };")
        out.append("}")
        out.append("")
        out.append("export type MethodName = keyof MethodMap;")
        out.append('export type MethodParams<M extends MethodName> = MethodMap[M]["params"];')
        out.append('export type MethodResult<M extends MethodName> = MethodMap[M]["result"];')
        out.append("")
        out.append("/** Runtime metadata of every method. */")
        out.append("export const METHODS = {")
        for name, m, p_ts, _ in infos:
            out.append(
                f"  {_prop_key(name)}: {{ hasParams: {'false' if p_ts is None else 'true'}, "
                f"paramsRequired: {'true' if m['paramsRequired'] else 'false'}, "
                f"mutating: {'true' if m.get('mutating') else 'false'} }},"
            )
        out.append("} as const;")
        out.append("")

        out.append("// ---- notifications ----")
        out.append("")
        out.append("/** Server-to-client notifications and their params. */")
        out.append("export interface NotificationMap {")
        for name in sorted(notifications):
            n = notifications[name]
            out += _doc(n.get("summary"), "  ")
            out.append(f"  {_prop_key(name)}: {self.expr(n.get('params', True), f'notifications.{name}.params')};")
        out.append("}")
        out.append("")
        out.append("export type NotificationName = keyof NotificationMap;")
        out.append("export const NOTIFICATIONS = [" + ", ".join(json.dumps(n) for n in sorted(notifications)) + "] as const;")
        out.append("")

        out.append("// ---- typed client methods ----")
        out.append("")
        out.append("/**")
        out.append(" * One typed method per protocol method. `RewindClient` (client.ts) supplies `call`,")
        out.append(" * which sends the request and resolves with the result.")
        out.append(" */")
        out.append("export abstract class RewindMethods extends EventEmitter {")
        out.append("  abstract call<M extends MethodName>(")
        out.append("    method: M,")
        out.append("    params?: MethodParams<M>,")
        out.append("    opts?: CallOptions,")
        out.append("  ): Promise<MethodResult<M>>;")
        seen_names: set[str] = set()
        for name, m, p_ts, r_ts in infos:
            js = camel(name)
            if not _IDENT.match(js) or js in seen_names or js in _RESERVED_MEMBERS:
                raise SchemaError(f"methods.{name}: bad, duplicate or reserved client method name {js!r}")
            seen_names.add(js)
            out.append("")
            doc = m.get("summary") or ""
            doc += f"\n\n`{name}`" + (" (mutating; applied in order)" if m.get("mutating") else " (read-only)")
            out += _doc(doc, "  ")
            lit = json.dumps(name)
            if p_ts is None:
                out.append(f"  {js}(opts?: CallOptions): Promise<{r_ts}> {{")
                out.append(f"    return this.call({lit}, undefined, opts);")
            else:
                q = "" if m["paramsRequired"] else "?"
                out.append(f"  {js}(params{q}: {p_ts}, opts?: CallOptions): Promise<{r_ts}> {{")
                out.append(f"    return this.call({lit}, params, opts);")
            out.append("  }")
        out.append("}")
        out.append("")
        return "\n".join(out)


def generate(schema: dict) -> dict[str, str]:
    """Map output paths (relative to clients/) to their generated contents."""
    return {OUT_PATH: _Gen(schema).render()}


if __name__ == "__main__":  # pragma: no cover - convenience for manual runs
    import pathlib
    import sys

    root = pathlib.Path(__file__).resolve().parent.parent
    schema = json.loads((root / "schema" / "rewind-protocol.json").read_text(encoding="utf-8"))
    for path, text in generate(schema).items():
        sys.stdout.write(f"==> {path}\n{text}")
