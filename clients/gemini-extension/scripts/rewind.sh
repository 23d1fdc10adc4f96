#!/bin/sh
# How rewind's Claude Code plugin and Gemini CLI extension find the rewind
# binary (docs/agents.md): $REWIND_BIN when set, else `rewind` on PATH (where
# `pip install rewind-sidecar`, `pipx install rewind-sidecar` and
# `cargo install` put it). The plugin ships no binary of its own.
#
# Without one, a hook still exits 0 (a hook never breaks the agent) and says
# so once per session, at its start; `rewind mcp` fails with 127 and the
# agent reports the server as failed.
if [ -n "${REWIND_BIN:-}" ]; then
  exec "$REWIND_BIN" "$@"
fi
if command -v rewind >/dev/null 2>&1; then
  exec rewind "$@"
fi
msg="rewind: no rewind binary (not on PATH, REWIND_BIN unset): this session is not checkpointed. Install it with: pipx install rewind-sidecar (or pip install rewind-sidecar, or cargo install --path <rewind checkout>)"
echo "$msg" >&2
if [ "${1:-}" = hook ]; then
  case "$(cat)" in
    *'"SessionStart"'*) printf '{"systemMessage":"%s"}\n' "$msg" ;;
  esac
  exit 0
fi
exit 127
