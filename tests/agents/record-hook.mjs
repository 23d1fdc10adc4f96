#!/usr/bin/env node
// Hook payload recorder: usable as the command of any agent hook.
// Reads the event payload from stdin and appends ONE JSON line to $HOOK_LOG:
//   {t_start, t_end, pid, ppid, argv, cwd, env_names, env_selected, stdin_bytes, payload}
// Exits 0 and prints nothing on stdout (nor stderr).
// Optional env:
//   HOOK_LOG_TRUNCATE=N  truncate every string in the payload to N chars
//   HOOK_SLEEP_MS=N      sleep N ms before exiting (to observe hook concurrency)
import fs from 'node:fs';

const tStart = performance.timeOrigin; // ms since epoch when this process started
const chunks = [];
let failed = null;
try {
  // fd 0 may be a pipe that is already closed or absent; readFileSync handles both.
  chunks.push(fs.readFileSync(0));
} catch (e) {
  failed = String(e?.code || e);
}
const raw = Buffer.concat(chunks).toString('utf8');
let payload;
try {
  payload = raw.trim() ? JSON.parse(raw) : null;
} catch {
  payload = { unparsed: raw };
}

const limit = Number(process.env.HOOK_LOG_TRUNCATE || 0);
function trunc(v) {
  if (!limit) return v;
  if (typeof v === 'string') return v.length > limit ? v.slice(0, limit) + `…[truncated ${v.length - limit} chars]` : v;
  if (Array.isArray(v)) return v.map(trunc);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, trunc(x)]));
  return v;
}

// Variables whose values are useful to see (project dirs, session ids); all
// other variables are recorded by name only.
const SELECTED = /^(CLAUDE_PROJECT_DIR|CLAUDE_ENV_FILE|CLAUDE_CODE_ENTRYPOINT|CLAUDE_PLUGIN_ROOT|CLAUDECODE|GEMINI_PROJECT_DIR|GEMINI_CWD|GEMINI_SESSION_ID|GEMINI_PLANS_DIR|GEMINI_CLI|CODEX_.*|PWD|SHELL|SHLVL)$/;
const envSelected = {};
for (const [k, v] of Object.entries(process.env)) {
  if (SELECTED.test(k) && !/KEY|TOKEN|SECRET/.test(k)) envSelected[k] = v;
}

const rec = {
  t_start: Math.round(tStart),
  t_end: Date.now(),
  pid: process.pid,
  ppid: process.ppid,
  argv: process.argv.slice(2),
  cwd: process.cwd(),
  env_names: Object.keys(process.env).sort(),
  env_selected: envSelected,
  stdin_bytes: Buffer.byteLength(raw),
  ...(failed ? { stdin_error: failed } : {}),
  payload: trunc(payload),
};

const out = process.env.HOOK_LOG;
if (out) {
  try {
    fs.appendFileSync(out, JSON.stringify(rec) + '\n');
  } catch {
    // never fail the agent
  }
}
const sleep = Number(process.env.HOOK_SLEEP_MS || 0);
if (sleep > 0) await new Promise((r) => setTimeout(r, sleep));
process.exit(0);
