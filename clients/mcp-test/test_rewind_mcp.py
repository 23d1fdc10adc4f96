"""Drive `rewind mcp` with the official Python MCP SDK (a client that is
not ours): list the tools, check their schemas and annotations, run every
tool, the two-step restore and undo (including a stale token), and bad
arguments. Run: python test_rewind_mcp.py (REWIND_BIN: the binary; default
target/debug/rewind)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("REWIND_BIN", str(ROOT / "target" / "debug" / "rewind"))

TOOLS = {
    "checkpoint": "write-store",
    "label": "write-store",
    "list_checkpoints": "read",
    "changed_files": "read",
    "diff": "read",
    "file_history": "read",
    "restore": "destructive",
    "undo": "destructive",
    "blame": "read",
    "revert": "destructive",
}


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print(f"ok - {what}")


def structured(r: Any) -> dict[str, Any]:
    s = r.structured_content
    assert isinstance(s, dict), f"no structured content: {r}"
    return s


def text(r: Any) -> str:
    return "".join(getattr(c, "text", "") for c in r.content)


async def expect_error(session: ClientSession, name: str, args: dict[str, Any], what: str) -> None:
    """Arguments that are wrong (schema or meaning) get a tool error the
    model can read (isError, as the MCP spec asks for input validation
    errors); nothing crashes."""
    r = await session.call_tool(name, args)
    check(r.is_error is True and ("invalid arguments" in text(r) or "deserialize" in text(r)), f"{what}: tool error ({text(r)})")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        proj = Path(tmp) / "proj"
        proj.mkdir()
        (proj / "a.txt").write_text("one\n")
        (proj / "b.txt").write_text("bee\n")
        env = dict(os.environ, REWIND_HOME=str(home), RUST_LOG="warn")
        params = StdioServerParameters(command=BIN, args=["mcp", "--cwd", str(proj)], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                print(f"protocol version {init.protocol_version}")

                tools = (await session.list_tools()).tools
                check({t.name for t in tools} == set(TOOLS), f"tools: {sorted(t.name for t in tools)}")
                for t in tools:
                    schema = t.input_schema
                    check(
                        isinstance(schema, dict) and schema.get("type") == "object",
                        f"{t.name} has an object input schema",
                    )
                    check(bool(t.description) and len(t.description or "") > 40, f"{t.name} has a description")
                    a = t.annotations
                    assert a is not None, t.name
                    kind = TOOLS[t.name]
                    if kind == "read":
                        check(a.read_only_hint is True, f"{t.name} is read-only")
                    else:
                        check(a.read_only_hint is False, f"{t.name} is not read-only")
                        check(
                            a.destructive_hint is (kind == "destructive"),
                            f"{t.name} destructive_hint={a.destructive_hint}",
                        )
                restore_schema = next(t.input_schema for t in tools if t.name == "restore")
                check("confirmToken" in restore_schema["properties"], "restore takes confirmToken")
                check(restore_schema.get("required") == ["target"], "restore requires target")
                for name in ("restore", "undo", "revert"):
                    schema = next(t.input_schema for t in tools if t.name == name)
                    check("onConflict" in schema["properties"], f"{name} takes onConflict")

                # checkpoint
                (proj / "a.txt").write_text("two\n")
                r = await session.call_tool("checkpoint", {"label": "after edit"})
                cp = structured(r)
                check(not r.is_error and bool(cp["entryId"]), f"checkpoint: {text(r)}")
                check(cp["diff"]["modified"] == ["a.txt"], "checkpoint reports a.txt modified")
                edit_id = cp["entryId"]

                # list_checkpoints
                r = await session.call_tool("list_checkpoints", {})
                lc = structured(r)
                check(any(c.get("label") == "after edit" for c in lc["checkpoints"]), "list_checkpoints shows the label")
                baseline = lc["initialEntryId"]
                check(bool(baseline), "list_checkpoints gives initialEntryId")
                r = await session.call_tool("list_checkpoints", {"limit": 1})
                lc1 = structured(r)
                check(
                    len(lc1["checkpoints"]) == 1 and lc1["checkpoints"][0]["entryId"] == edit_id,
                    "limit keeps the last one",
                )
                r = await session.call_tool("list_checkpoints", {"query": "no such label"})
                check(structured(r)["checkpoints"] == [], "query filters")

                # label: a note added keeps the label
                r = await session.call_tool("label", {"entryId": edit_id, "note": "why it matters"})
                check(not r.is_error, f"label: {text(r)}")
                r = await session.call_tool("list_checkpoints", {})
                mine = [c for c in structured(r)["checkpoints"] if c["entryId"] == edit_id]
                check(
                    len(mine) == 1 and mine[0].get("label") == "after edit" and mine[0].get("note") == "why it matters",
                    f"label keeps the label and adds the note: {mine}",
                )

                # changed_files
                (proj / "c.txt").write_text("new\n")
                r = await session.call_tool("changed_files", {})
                cf = structured(r)
                got = {(f["path"], f["status"]) for f in cf["files"]}
                check(got == {("a.txt", "modified"), ("c.txt", "added")}, f"changed_files baseline→@working: {got}")
                r = await session.call_tool("changed_files", {"from": baseline, "to": edit_id})
                check([f["path"] for f in structured(r)["files"]] == ["a.txt"], "changed_files between entries")
                r = await session.call_tool("changed_files", {"limit": 1})
                cf1 = structured(r)
                check(cf1["truncated"] is True and cf1["total"] == 2 and len(cf1["files"]) == 1, "changed_files limit says what was cut")
                (proj / "c.txt").unlink()

                # diff
                r = await session.call_tool("diff", {"path": "a.txt"})
                d = structured(r)
                check("-one" in d["unifiedDiff"] and "+two" in d["unifiedDiff"], "diff shows the change")
                check(d["additions"] == 1 and d["deletions"] == 1 and d["truncated"] is False, "diff counts")
                r = await session.call_tool("diff", {"path": "a.txt", "maxBytes": 10})
                d = structured(r)
                check(d["truncated"] is True and len(d["unifiedDiff"]) <= 10, "diff maxBytes cuts")
                check("diff cut" in text(r), "diff says what was cut")
                r = await session.call_tool("diff", {"path": "b.txt"})
                check(structured(r)["changed"] is False, "diff of an unchanged file")

                # file_history
                r = await session.call_tool("file_history", {"path": "a.txt"})
                fh = structured(r)
                check(len(fh["versions"]) >= 2 and fh["versions"][-1]["entryId"] == edit_id, "file_history")

                # restore, two steps
                r = await session.call_tool("restore", {"target": baseline})
                plan = structured(r)
                check(plan["executed"] is False and bool(plan["confirmToken"]), "restore without token: plan only")
                check({"path": "a.txt", "action": "write"} in plan["files"], "plan writes a.txt")
                check((proj / "a.txt").read_text() == "two\n", "first call wrote nothing")
                r = await session.call_tool("restore", {"target": baseline, "confirmToken": plan["confirmToken"]})
                check(structured(r)["executed"] is True, f"restore with token: {text(r)}")
                check((proj / "a.txt").read_text() == "one\n", "restore wrote a.txt")

                # stale token: the files change between plan and confirm
                r = await session.call_tool("restore", {"target": edit_id})
                plan = structured(r)
                check({"path": "a.txt", "action": "write"} in plan["files"], "second plan writes a.txt")
                (proj / "b.txt").write_text("changed meanwhile\n")
                r = await session.call_tool("restore", {"target": edit_id, "confirmToken": plan["confirmToken"]})
                stale = structured(r)
                check(r.is_error is True and stale["executed"] is False and stale["staleToken"] is True, "stale token refused")
                check(stale["confirmToken"] != plan["confirmToken"], "a new token with the new plan")
                check((proj / "a.txt").read_text() == "one\n", "stale token wrote nothing")
                r = await session.call_tool("restore", {"target": baseline, "confirmToken": stale["confirmToken"]})
                check(structured(r)["executed"] is False, "a token does not confirm other arguments")
                check((proj / "a.txt").read_text() == "one\n", "still nothing written")
                r = await session.call_tool("restore", {"target": edit_id, "confirmToken": stale["confirmToken"]})
                check(structured(r)["executed"] is True, "the new token executes")
                check((proj / "a.txt").read_text() == "two\n", "restore to the edit wrote a.txt")
                check((proj / "b.txt").read_text() == "changed meanwhile\n", "the file changed meanwhile is kept")
                # onConflict "abort": the changed file stops the write
                (proj / "b.txt").write_text("changed again\n")
                args = {"target": baseline, "onConflict": "abort"}
                r = await session.call_tool("restore", args)
                plan = structured(r)
                check(plan["plan"]["conflicts"] == [{"path": "b.txt", "reason": "dirty"}], "the plan names the conflict")
                try:
                    r = await session.call_tool("restore", {**args, "confirmToken": plan["confirmToken"]})
                    aborted = r.is_error is True
                except MCPError:
                    aborted = True
                check(aborted and (proj / "a.txt").read_text() == "two\n", "onConflict abort writes nothing")
                await session.call_tool("checkpoint", {"label": "b changed"})

                # undo, two steps
                r = await session.call_tool("undo", {})
                plan = structured(r)
                check(plan["executed"] is False and (proj / "a.txt").read_text() == "two\n", "undo without token: plan only")
                r = await session.call_tool("undo", {"confirmToken": "0" * 32})
                check(structured(r)["executed"] is False and (proj / "a.txt").read_text() == "two\n", "undo with a wrong token writes nothing")
                r = await session.call_tool("undo", {"confirmToken": plan["confirmToken"]})
                check(structured(r)["executed"] is True, f"undo with token: {text(r)}")
                check((proj / "a.txt").read_text() == "one\n", "undo put a.txt back")

                # revert one checkpoint, keep the later one; blame names them
                (proj / "c.txt").write_text("x\ny\nz\n")
                await session.call_tool("checkpoint", {"label": "c base"})
                (proj / "c.txt").write_text("X\ny\nz\n")
                first = structured(await session.call_tool("checkpoint", {"label": "c first"}))["entryId"]
                (proj / "c.txt").write_text("X\ny\nZ\n")
                second = structured(await session.call_tool("checkpoint", {"label": "c second"}))["entryId"]
                r = await session.call_tool("blame", {"path": "c.txt"})
                lines = structured(r)["lines"]
                check([line["entryId"] for line in lines][::2] == [first, second], "blame names the checkpoint of each line")
                r = await session.call_tool("revert", {"entryId": first})
                plan = structured(r)
                check(plan["executed"] is False and (proj / "c.txt").read_text() == "X\ny\nZ\n", "revert without token: plan only")
                check([f["status"] for f in plan["plan"]["files"]] == ["clean"], f"revert plan: {text(r)}")
                r = await session.call_tool("revert", {"entryId": first, "confirmToken": plan["confirmToken"]})
                check(structured(r)["executed"] is True, f"revert with token: {text(r)}")
                check((proj / "c.txt").read_text() == "x\ny\nZ\n", "revert took the first change out and kept the second")

                # another process records into the same session while the
                # server runs (as hooks do): not locked out, and seen
                run = subprocess.run(
                    [BIN, "run", "--cwd", str(proj), "--", "sh", "-c", "echo dee > d.txt"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    cwd=proj,
                )
                check(run.returncode == 0, f"rewind run beside the server: {run.stderr.strip()}")
                r = await session.call_tool("list_checkpoints", {"query": "echo dee"})
                check(len(structured(r)["checkpoints"]) >= 1, "the server sees the checkpoints recorded beside it")
                r = await session.call_tool("file_history", {"path": "d.txt"})
                check(structured(r)["versions"][-1]["status"] == "added", "and the file they added")

                # bad arguments: tool errors, and the server stays up
                await expect_error(session, "restore", {}, "restore without target")
                await expect_error(session, "restore", {"target": "no-such-entry"}, "restore to an unknown entry")
                await expect_error(session, "diff", {"path": 5}, "diff with a number as path")
                await expect_error(session, "diff", {"path": "../outside"}, "diff outside the project")
                await expect_error(session, "file_history", {"path": "a.txt", "bogus": 1}, "unknown argument")
                await expect_error(session, "list_checkpoints", {"limit": -1}, "negative limit")
                await expect_error(session, "changed_files", {"from": "nope"}, "unknown from")
                try:
                    await session.call_tool("no_such_tool", {})
                    raise AssertionError("unknown tool: no error")
                except MCPError as e:
                    check(e.code == -32602, f"unknown tool is a protocol error ({e.code}: {e.message})")
                r = await session.call_tool("list_checkpoints", {"limit": 2})
                check(not r.is_error and len(structured(r)["checkpoints"]) == 2, "server still answers")
    print("all MCP client checks passed")


if __name__ == "__main__":
    asyncio.run(main())
