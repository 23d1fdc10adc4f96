#!/usr/bin/env node
// Minimal Agent Client Protocol (ACP) client for Cline CLI: how the harness
// continues a Cline session headless. `cline --id ID` resumes a session only
// in the terminal UI (with --json it exits: "JSON output mode requires a
// prompt argument or piped stdin (interactive mode is unsupported)"); its ACP
// mode (`cline --acp`) offers `session/load`.
//
//   node cline-acp.mjs --cline BIN --cwd DIR [--session ID] [--model M]
//        [--timeout S] PROMPT [-- EXTRA_CLINE_ARGS…]
//
// --model M: `session/set_config_option model=M` after load/new. ACP mode
//   picks its model from the provider's catalog (CLINE_MODEL only if listed
//   there): for openai-compatible that is gpt-4o, which gets another tool set
//   (apply_patch instead of editor, no team tools). The tool set is fixed
//   when the session starts: after `session/load` it stays gpt-4o's, only
//   the model id in the requests changes.
// The run-start hook is TaskStart (agent_start), not TaskResume: cline sets
// CLINE_HOOK_AGENT_RESUME=1 only for `--id` and deletes it otherwise, ACP
// included.
//
// Starts `BIN --acp --auto-approve true [EXTRA…]`, sends `initialize`, then
// `session/load {sessionId}` (or `session/new` without --session), then
// `session/prompt`, and answers any `session/request_permission` with the
// first "allow" option. Prints every JSON-RPC message it got from cline, one
// per line, then {"type":"acp_result",sessionId,stopReason}; exits 0 if the
// prompt ended with end_turn, else 1. Newline-delimited JSON-RPC on stdio.
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
let bin = 'cline';
let cwd = process.cwd();
let sessionId = null;
let timeoutS = 120;
let prompt = null;
let extra = [];
let model = null;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--cline') bin = args[++i];
  else if (a === '--cwd') cwd = args[++i];
  else if (a === '--session') sessionId = args[++i];
  else if (a === '--timeout') timeoutS = Number(args[++i]);
  else if (a === '--model') model = args[++i];
  else if (a === '--') { extra = args.slice(i + 1); break; } else prompt = a;
}
if (prompt === null) {
  console.error('usage: node cline-acp.mjs --cline BIN --cwd DIR [--session ID] PROMPT [-- EXTRA…]');
  process.exit(2);
}

const child = spawn(bin, ['--acp', '--auto-approve', 'true', ...extra], { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');
let nextId = 1;
const pending = new Map();
function request(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}

let buf = '';
child.stdout.on('data', (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    if (!line) continue;
    let msg;
    try { msg = JSON.parse(line); } catch { out({ type: 'acp_unparsed', line: line.slice(0, 500) }); continue; }
    out(msg);
    if (msg.id !== undefined && !msg.method && pending.has(msg.id)) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p.reject(Object.assign(new Error(`${p.method}: ${JSON.stringify(msg.error)}`), { rpc: msg.error }));
      else p.resolve(msg.result);
    } else if (msg.method && msg.id !== undefined) {
      // A request from the agent: permissions are granted, anything else
      // (fs/*, terminal/*: not offered in our capabilities) refused.
      let reply;
      if (msg.method === 'session/request_permission') {
        const opts = msg.params?.options || [];
        const opt = opts.find((o) => /allow/.test(o.kind || '')) || opts[0];
        reply = { jsonrpc: '2.0', id: msg.id, result: { outcome: opt ? { outcome: 'selected', optionId: opt.optionId } : { outcome: 'cancelled' } } };
      } else {
        reply = { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `method not supported by cline-acp.mjs: ${msg.method}` } };
      }
      child.stdin.write(JSON.stringify(reply) + '\n');
    }
  }
});

let exitCode = null;
const exited = new Promise((r) => child.on('close', (code, signal) => { exitCode = code ?? signal; r(); }));
child.on('error', (e) => { out({ type: 'acp_error', message: String(e) }); process.exit(1); });
const timer = setTimeout(() => { out({ type: 'acp_error', message: `timeout after ${timeoutS} s` }); child.kill('SIGKILL'); process.exit(1); }, timeoutS * 1000);

let status = 1;
try {
  await request('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
  if (sessionId) await request('session/load', { sessionId, cwd, mcpServers: [] });
  else sessionId = (await request('session/new', { cwd, mcpServers: [] })).sessionId;
  if (model) await request('session/set_config_option', { sessionId, configId: 'model', value: model });
  const r = await request('session/prompt', { sessionId, prompt: [{ type: 'text', text: prompt }] });
  out({ type: 'acp_result', sessionId, stopReason: r?.stopReason });
  status = r?.stopReason === 'end_turn' ? 0 : 1;
} catch (e) {
  out({ type: 'acp_error', message: String(e.message || e), sessionId });
}
// Closing stdin ends the ACP connection; cline then shuts its session down.
child.stdin.end();
const grace = setTimeout(() => child.kill('SIGTERM'), 10000);
await exited;
clearTimeout(grace);
clearTimeout(timer);
out({ type: 'acp_exit', code: exitCode });
process.exit(status);
