#!/usr/bin/env node
// Scripted, offline "model" for driving real coding agents end to end.
//
// Speaks, with streaming, the three wire protocols the agents use:
//   - Anthropic Messages      POST /v1/messages            (Claude Code)
//   - OpenAI Responses        POST /v1/responses           (Codex CLI)
//   - Gemini generateContent  POST /v1beta/models/M:streamGenerateContent?alt=sse,
//                             :generateContent, :countTokens  (Gemini CLI)
//   - OpenAI Chat Completions POST /v1/chat/completions     (OpenCode, Kilo, Qwen Code, Droid, Copilot, Cline)
//     Several agents share it: the driver names the one it runs
//     (startModelServer({agent})), and its tools decide the calls' shapes.
//
// It serves a *script*: a list of turns; each turn is a list of steps, a step
// is one tool call (or an array of tool calls made in one model response), and
// the turn ends with a final text.  The server is stateless: for every request
// it finds the user message that carries the marker "[[rewind-turn:N]]" (the
// driver prepends it to each prompt), counts the tool results that come after
// it in the conversation, and answers with the next step (or the final text).
// Requests without the marker or without tools (titles, next-speaker checks,
// routing, ...) get a short canned answer.
//
// Steps are either abstract operations, translated into the agent's own tool
// names and argument shapes by looking at the tools the request offers:
//   {"op":"write", "path":"a.txt", "content":"..."}
//   {"op":"edit",  "path":"a.txt", "old":"line", "new":"line"}
//   {"op":"shell", "command":"mkdir -p gen && ..."}
//   {"op":"read",  "path":"a.txt"}
// or raw calls passed through verbatim: {"tool":"Write","input":{...}}.
// Any step may carry "only": ["claude"|"codex"|"gemini"] to apply to some
// agents only.  Relative paths are resolved against --project where the agent
// wants absolute paths.
//
// Use as a module (startModelServer) or standalone:
//   node model-server.mjs --script script.json --project DIR [--port 0]
//        [--log requests.jsonl] [--dump-dir DIR]
// It prints {"port":N,"url":"http://127.0.0.1:N"} on stdout once listening.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

export const TURN_MARKER_RE = /\[\[rewind-turn:(\d+)\]\]/g;

const AGENT_BY_API = { anthropic: 'claude', responses: 'codex', gemini: 'gemini', chat: 'opencode' };

function rid(prefix) {
  return prefix + crypto.randomBytes(12).toString('hex');
}

function lastMarker(text) {
  let m;
  let turn = null;
  TURN_MARKER_RE.lastIndex = 0;
  while ((m = TURN_MARKER_RE.exec(text)) !== null) turn = Number(m[1]);
  return turn;
}

function textOf(x) {
  if (x == null) return '';
  if (typeof x === 'string') return x;
  if (Array.isArray(x)) return x.map(textOf).join('\n');
  if (typeof x === 'object') {
    if (typeof x.text === 'string') return x.text;
    if (typeof x.input_text === 'string') return x.input_text;
    if (x.content !== undefined) return textOf(x.content);
  }
  return '';
}

function shortStr(s, n = 300) {
  if (typeof s !== 'string') s = JSON.stringify(s) ?? '';
  return s.length > n ? s.slice(0, n) + `…(+${s.length - n})` : s;
}

// ---------------------------------------------------------------------------
// Conversation analysis, per API: which turn, and which tool results follow it.

function analyzeAnthropic(body) {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  let idx = -1;
  let turn = null;
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i].role !== 'user') continue;
    const blocks = typeof msgs[i].content === 'string' ? [{ type: 'text', text: msgs[i].content }] : msgs[i].content || [];
    const t = lastMarker(blocks.filter((b) => b.type === 'text').map((b) => b.text).join('\n'));
    if (t !== null) { idx = i; turn = t; break; }
  }
  const results = [];
  if (idx >= 0) {
    for (const m of msgs.slice(idx + 1)) {
      if (m.role !== 'user' || !Array.isArray(m.content)) continue;
      for (const b of m.content) {
        if (b.type === 'tool_result') results.push({ id: b.tool_use_id, is_error: !!b.is_error, output: shortStr(textOf(b.content)), full: textOf(b.content) });
      }
    }
  }
  const tools = (body.tools || []).map((t) => t.name).filter(Boolean);
  // MCP tools Claude Code defers: named in a system message, loaded with
  // ToolSearch before they can be called.
  const deferred = [...new Set(JSON.stringify(body).match(/mcp__[A-Za-z0-9_]+/g) || [])].filter((n) => !tools.includes(n));
  return { turn, results, tools, deferred };
}

function analyzeResponses(body) {
  const items = Array.isArray(body.input) ? body.input : typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : [];
  let idx = -1;
  let turn = null;
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if ((it.type === 'message' || it.type === undefined) && it.role === 'user') {
      const t = lastMarker(textOf(it.content));
      if (t !== null) { idx = i; turn = t; break; }
    }
  }
  const results = [];
  if (idx >= 0) {
    for (const it of items.slice(idx + 1)) {
      if (typeof it.type === 'string' && it.type.endsWith('_call_output')) {
        const out = typeof it.output === 'string' ? it.output : textOf(it.output) || JSON.stringify(it.output);
        results.push({ id: it.call_id, type: it.type, output: shortStr(out), full: out });
      } else if (it.type === 'tool_search_output') {
        // Codex's answer to a tool_search: the tools it loaded, by namespace.
        const out = JSON.stringify(it.tools ?? []);
        results.push({ id: it.call_id, type: it.type, output: shortStr(out), full: out });
      }
    }
  }
  const toolDefs = {};
  for (const t of body.tools || []) {
    const name = t.name || t.function?.name || t.type;
    if (name) toolDefs[name] = t;
  }
  // MCP tools Codex defers behind tool_search: the namespaces named in its
  // instructions, and the tools every tool_search_output so far loaded
  // (`namespace.name`; a call names both).
  const text = JSON.stringify(body);
  const namespaces = [...new Set(text.match(/mcp__[A-Za-z0-9_]+(?=: )/g) || [])];
  const deferred = [];
  for (const it of items) {
    if (it.type !== 'tool_search_output') continue;
    for (const ns of it.tools || []) {
      for (const t of ns.tools || []) if (ns.name && t.name) deferred.push(`${ns.name}.${t.name}`);
    }
  }
  return { turn, results, tools: Object.keys(toolDefs), toolDefs, namespaces, deferred: [...new Set(deferred)] };
}

function analyzeGemini(body) {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  let idx = -1;
  let turn = null;
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (c.role && c.role !== 'user') continue;
    const t = lastMarker((c.parts || []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('\n'));
    if (t !== null) { idx = i; turn = t; break; }
  }
  const results = [];
  if (idx >= 0) {
    for (const c of contents.slice(idx + 1)) {
      for (const p of c.parts || []) {
        if (p.functionResponse) results.push({ id: p.functionResponse.id, name: p.functionResponse.name, output: shortStr(p.functionResponse.response), full: JSON.stringify(p.functionResponse.response) });
      }
    }
  }
  const toolDefs = {};
  for (const t of body.tools || []) {
    for (const fd of t.functionDeclarations || []) toolDefs[fd.name] = fd;
  }
  return { turn, results, tools: Object.keys(toolDefs), toolDefs };
}

function analyzeChat(body) {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  let idx = -1;
  let turn = null;
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i].role !== 'user') continue;
    const t = lastMarker(textOf(msgs[i].content));
    if (t !== null) { idx = i; turn = t; break; }
  }
  const results = [];
  if (idx >= 0) {
    for (const m of msgs.slice(idx + 1)) {
      if (m.role === 'tool') {
        const out = textOf(m.content);
        results.push({ id: m.tool_call_id, output: shortStr(out), full: out });
      }
    }
  }
  const toolDefs = {};
  for (const t of body.tools || []) {
    const f = t.function || t;
    if (f?.name) toolDefs[f.name] = f;
  }
  const tools = Object.keys(toolDefs);
  // MCP tools Qwen Code defers: named in a reminder, called through its
  // `tool_call` after a `tool_search`. Droid's (`SERVER___TOOL`): named in
  // its "Deferred tools:" reminder, loaded with ToolSearch.
  const said = JSON.stringify(body.messages || []);
  const droidSaid = (body.messages || []).map((m) => textOf(m.content)).join('\n');
  const deferred = [...new Set([...(said.match(/mcp__[A-Za-z0-9_]+/g) || []), ...(droidSaid.match(/\b[A-Za-z0-9-]+___[A-Za-z0-9_]+/g) || [])])].filter((n) => !tools.includes(n));
  return { turn, results, tools, toolDefs, deferred };
}

// ---------------------------------------------------------------------------
// Script handling

export function loadScript(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function stepsFor(turnSpec, agent) {
  const steps = [];
  for (const s of turnSpec.steps || []) {
    const group = (Array.isArray(s) ? s : [s]).filter((c) => !c.only || c.only.includes(agent));
    if (group.length) steps.push(group);
  }
  return steps;
}

// Returns {kind:'calls', calls:[...], stepIndex} or {kind:'final', text}
function nextAction(script, agent, turn, nResults) {
  const turnSpec = script.turns?.[turn - 1];
  if (!turnSpec) return { kind: 'final', text: `No script for turn ${turn}.` };
  const steps = stepsFor(turnSpec, agent);
  let cum = 0;
  for (let k = 0; k < steps.length; k++) {
    if (nResults <= cum) return { kind: 'calls', calls: steps[k], stepIndex: k };
    cum += steps[k].length;
  }
  return { kind: 'final', text: turnSpec.final || `Turn ${turn} done.` };
}

function absPath(project, p) {
  return path.isAbsolute(p) ? p : path.join(project, p);
}

function pickTool(tools, names) {
  for (const n of names) if (tools.includes(n)) return n;
  return null;
}

function splitLines(s) {
  const lines = s.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function patchAdd(p, content) {
  return ['*** Begin Patch', `*** Add File: ${p}`, ...splitLines(content).map((l) => '+' + l), '*** End Patch'].join('\n');
}

function patchUpdate(p, oldS, newS) {
  return ['*** Begin Patch', `*** Update File: ${p}`, '@@', ...splitLines(oldS).map((l) => '-' + l), ...splitLines(newS).map((l) => '+' + l), '*** End Patch'].join('\n');
}

function shq(s) {
  return "'" + s.replace(/'/g, "'\\''") + "'";
}

// Translate one step into a concrete call {name, input} for the given agent.
// For codex, input may be a string (freeform/custom tool) and the result
// carries {custom:true}.
// An MCP tool of the server `rewind` as the agent names it (Claude
// `mcp__rewind__T` or, from a plugin, `mcp__plugin_rewind_rewind__T`; Droid
// `rewind___T`; Copilot CLI `rewind-T`; Codex and Gemini their own
// spellings): the offered tool whose name ends with T
// and mentions rewind, else T itself.
function mcpToolName(offered, tool) {
  const ends = offered.filter((n) => n === tool || n.endsWith(`__${tool}`) || n.endsWith(`_${tool}`) || n.endsWith(`.${tool}`) || n.endsWith(`-${tool}`));
  return ends.find((n) => n.includes('rewind')) || ends[0] || tool;
}

// Fill `{{result:I:REGEX}}` in a step's input from the tool results of this
// turn so far (I counts from 0, or from the end if negative): the first
// capture group of REGEX that matched in result I's full text. The model server keeps no
// state, and this is how a scripted model uses an answer (an entry id, a
// confirmToken) in a later call.
const PLACEHOLDER_RE = /^\{\{result:(-?\d+):(.*)\}\}$/s;
function fill(v, results) {
  if (typeof v === 'string') {
    const m = PLACEHOLDER_RE.exec(v);
    if (!m) return v;
    const i = Number(m[1]);
    const r = results[i < 0 ? results.length + i : i];
    // JSON inside JSON (a Gemini functionResponse) read as plain JSON.
    const text = (r?.full ?? r?.output ?? '').replace(/\\"/g, '"').replace(/\\n/g, '\n');
    const found = r && new RegExp(m[2]).exec(text);
    // The first group that matched (a REGEX may offer alternatives).
    const value = found?.slice(1).find((g) => g !== undefined);
    return value ?? `<no match for ${m[2]} in result ${i}>`;
  }
  if (Array.isArray(v)) return v.map((x) => fill(x, results));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, results)]));
  return v;
}

function translate(call, agent, info, project) {
  if (call.op === 'mcp') {
    const name = mcpToolName([...info.tools, ...(info.deferred || [])], call.tool);
    const input = fill(call.input ?? {}, info.results);
    const dot = agent === 'codex' ? name.lastIndexOf('.') : -1;
    if (dot > 0) return { name: name.slice(dot + 1), namespace: name.slice(0, dot), input };
    // Qwen Code: a deferred tool is called through `tool_call`.
    if (!info.tools.includes(name) && info.tools.includes('tool_call')) return { name: 'tool_call', input: { name, arguments: input } };
    return { name, input };
  }
  if (call.op === 'mcp-load' && agent === 'codex') {
    // Codex: a client-side tool_search for rewind's namespace.
    return { toolSearch: { query: 'rewind checkpoints restore undo', limit: 20 } };
  }
  if (call.op === 'mcp-load') {
    // Claude Code and Droid: load rewind's deferred MCP tools (what a
    // model does first).
    const names = (info.deferred || []).filter((n) => n.includes('rewind'));
    if (info.tools.includes('tool_search')) return { name: 'tool_search', input: { query: `select:${names.join(',')}`, max_results: Math.max(names.length, 1) } };
    return { name: 'ToolSearch', input: { query: `select:${names.join(',')}`, max_results: Math.max(names.length, 1) } };
  }
  if (call.tool) {
    const isCustom = agent === 'codex' && info.toolDefs?.[call.tool]?.type === 'custom';
    return { name: call.tool, input: call.input ?? {}, custom: isCustom };
  }
  const op = call.op;
  if (agent === 'claude') {
    switch (op) {
      case 'write': return { name: 'Write', input: { file_path: absPath(project, call.path), content: call.content } };
      case 'edit': return { name: 'Edit', input: { file_path: absPath(project, call.path), old_string: call.old, new_string: call.new } };
      case 'read': return { name: 'Read', input: { file_path: absPath(project, call.path) } };
      case 'shell': return { name: 'Bash', input: { command: call.command, description: call.description || 'scripted shell step' } };
    }
  } else if (agent === 'gemini') {
    const T = info.tools;
    const params = (name) => Object.keys(info.toolDefs?.[name]?.parameters?.properties || info.toolDefs?.[name]?.parametersJsonSchema?.properties || {});
    const fileKey = (name) => ['file_path', 'absolute_path', 'path'].find((k) => params(name).includes(k)) || 'file_path';
    switch (op) {
      case 'write': { const n = pickTool(T, ['write_file']) || 'write_file'; return { name: n, input: { [fileKey(n)]: absPath(project, call.path), content: call.content } }; }
      case 'edit': {
        const n = pickTool(T, ['replace', 'edit']) || 'replace';
        const input = { [fileKey(n)]: absPath(project, call.path), old_string: call.old, new_string: call.new };
        if (params(n).includes('instruction')) input.instruction = call.instruction || `Replace "${call.old}" with "${call.new}".`;
        return { name: n, input };
      }
      case 'read': { const n = pickTool(T, ['read_file']) || 'read_file'; return { name: n, input: { [fileKey(n)]: absPath(project, call.path) } }; }
      case 'shell': {
        const n = pickTool(T, ['run_shell_command', 'shell']) || 'run_shell_command';
        const input = { command: call.command };
        if (params(n).includes('description')) input.description = call.description || 'scripted shell step';
        return { name: n, input };
      }
    }
  } else if (CHAT_AGENTS.includes(agent)) {
    // OpenCode's and Kilo's tools (write/edit/bash/read, camelCase
    // `filePath`), or Qwen Code's (Gemini CLI's names, `file_path`): the
    // offered tools' parameters decide.
    const T = info.tools;
    const params = (name) => Object.keys(info.toolDefs?.[name]?.parameters?.properties || {});
    const fileKey = (name) => ['filePath', 'file_path', 'absolute_path', 'path'].find((k) => params(name).includes(k)) || 'filePath';
    const pick = (names) => pickTool(T, names) || names[0];
    if (agent === 'droid') {
      // Factory's Droid: Create / Edit (old_str, new_str) / Read / Execute.
      switch (op) {
        case 'write': return { name: 'Create', input: { file_path: absPath(project, call.path), content: call.content } };
        case 'edit': return { name: 'Edit', input: { file_path: absPath(project, call.path), old_str: call.old, new_str: call.new } };
        case 'read': return { name: 'Read', input: { file_path: absPath(project, call.path) } };
        case 'shell': return { name: 'Execute', input: { command: call.command, summary: call.description || 'scripted shell step', riskLevel: 'medium', riskLevelReason: 'Scripted test step in a temporary project.' } };
      }
    }
    if (agent === 'cline') {
      // Cline CLI 3.0: editor (creates a missing file from new_text, else
      // replaces old_text, which must match once) / read_files / run_commands.
      // For a model id with "gpt" or "codex" in it (ACP mode's gpt-4o) it
      // offers apply_patch {input: Codex's patch grammar} instead of editor.
      if (!T.includes('editor') && T.includes('apply_patch') && (op === 'write' || op === 'edit')) {
        // Its Add File joins the `+` lines without a final newline: one more
        // empty `+` line gives the file its last newline.
        const add = () => patchAdd(call.path, call.content.endsWith('\n') ? `${call.content}\n` : call.content);
        return { name: 'apply_patch', input: { input: op === 'write' ? add() : patchUpdate(call.path, call.old, call.new) } };
      }
      switch (op) {
        case 'write': return { name: 'editor', input: { path: absPath(project, call.path), new_text: call.content } };
        case 'edit': return { name: 'editor', input: { path: absPath(project, call.path), old_text: call.old, new_text: call.new } };
        case 'read': return { name: 'read_files', input: { files: [{ path: absPath(project, call.path) }] } };
        case 'shell': return { name: 'run_commands', input: { commands: [call.command] } };
      }
    }
    if (agent === 'copilot') {
      // GitHub Copilot CLI: create / edit (path, old_str, new_str) / view / bash.
      switch (op) {
        case 'write': return { name: 'create', input: { path: absPath(project, call.path), file_text: call.content } };
        case 'edit': return { name: 'edit', input: { path: absPath(project, call.path), old_str: call.old, new_str: call.new } };
        case 'read': return { name: 'view', input: { path: absPath(project, call.path) } };
        case 'shell': return { name: 'bash', input: { command: call.command, description: call.description || 'scripted shell step' } };
      }
    }
    switch (op) {
      case 'write': { const n = pick(['write', 'write_file']); return { name: n, input: { [fileKey(n)]: absPath(project, call.path), content: call.content } }; }
      case 'edit': {
        const n = pick(['edit', 'replace']);
        const [o, nw] = params(n).includes('oldString') ? ['oldString', 'newString'] : ['old_string', 'new_string'];
        return { name: n, input: { [fileKey(n)]: absPath(project, call.path), [o]: call.old, [nw]: call.new } };
      }
      case 'read': { const n = pick(['read', 'read_file']); return { name: n, input: { [fileKey(n)]: absPath(project, call.path) } }; }
      case 'shell': {
        const n = pick(['bash', 'run_shell_command', 'shell']);
        const input = { command: call.command };
        if (params(n).includes('description')) input.description = call.description || 'scripted shell step';
        return { name: n, input };
      }
    }
  } else if (agent === 'codex') {
    const T = info.tools;
    const defs = info.toolDefs || {};
    const shellCall = (cmd) => {
      const n = pickTool(T, ['shell_command', 'exec_command', 'shell']);
      if (n === 'shell_command') return { name: n, input: { command: cmd } };
      if (n === 'exec_command') return { name: n, input: { cmd } };
      if (n === 'shell') return { name: n, input: { command: ['bash', '-lc', cmd] } };
      return { name: 'shell_command', input: { command: cmd } };
    };
    const patchCall = (patch) => {
      if (!T.includes('apply_patch')) return null;
      if (defs.apply_patch?.type === 'custom') return { name: 'apply_patch', input: patch, custom: true };
      return { name: 'apply_patch', input: { input: patch } };
    };
    switch (op) {
      case 'write': return patchCall(patchAdd(call.path, call.content)) || shellCall(`cat > ${shq(call.path)} <<'REWIND_EOF'\n${call.content}REWIND_EOF`);
      case 'edit': return patchCall(patchUpdate(call.path, call.old, call.new)) || shellCall(`python3 - <<'EOF'\nimport pathlib;p=pathlib.Path(${JSON.stringify(call.path)});p.write_text(p.read_text().replace(${JSON.stringify(call.old)},${JSON.stringify(call.new)},1))\nEOF`);
      case 'read': return shellCall(`cat ${shq(call.path)}`);
      case 'shell': return shellCall(call.command);
    }
  }
  throw new Error(`cannot translate op ${JSON.stringify(call)} for ${agent}`);
}

// ---------------------------------------------------------------------------
// Wire encoders

function sse(res, event, data) {
  if (event) res.write(`event: ${event}\n`);
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

function chunks(s, n = 40) {
  const out = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out.length ? out : [''];
}

function anthropicReply(res, body, action) {
  const model = body.model || 'claude-scripted';
  const content = action.kind === 'final'
    ? [{ type: 'text', text: action.text }]
    : action.calls.map((c) => ({ type: 'tool_use', id: rid('toolu_'), name: c.name, input: c.input }));
  const stop = action.kind === 'final' ? 'end_turn' : 'tool_use';
  const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const id = rid('msg_');
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': rid('req_') });
    res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content, stop_reason: stop, stop_sequence: null, usage }));
    return content;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'request-id': rid('req_') });
  sse(res, 'message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  content.forEach((b, index) => {
    if (b.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of chunks(b.text)) sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      for (const piece of chunks(JSON.stringify(b.input), 200)) sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
  return content;
}

function responsesReply(res, body, action) {
  const respId = rid('resp_');
  const model = body.model || 'scripted';
  const items = action.kind === 'final'
    ? [{ type: 'message', id: rid('msg_'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: action.text, annotations: [] }] }]
    : action.calls.map((c) => c.toolSearch
      ? { type: 'tool_search_call', id: rid('tsc_'), call_id: rid('call_'), execution: 'client', arguments: c.toolSearch, status: 'completed' }
      : c.custom
      ? { type: 'custom_tool_call', id: rid('ctc_'), call_id: rid('call_'), name: c.name, input: c.input, status: 'completed' }
      : { type: 'function_call', id: rid('fc_'), call_id: rid('call_'), name: c.name, ...(c.namespace ? { namespace: c.namespace } : {}), arguments: JSON.stringify(c.input), status: 'completed' });
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 };
  const base = { id: respId, object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [] };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': rid('req_') });
  let seq = 0;
  const ev = (type, data) => sse(res, type, { type, sequence_number: seq++, ...data });
  ev('response.created', { response: base });
  ev('response.in_progress', { response: base });
  items.forEach((item, output_index) => {
    if (item.type === 'message') {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      ev('response.content_part.added', { output_index, item_id: item.id, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const piece of chunks(item.content[0].text)) ev('response.output_text.delta', { output_index, item_id: item.id, content_index: 0, delta: piece });
      ev('response.output_text.done', { output_index, item_id: item.id, content_index: 0, text: item.content[0].text });
      ev('response.content_part.done', { output_index, item_id: item.id, content_index: 0, part: item.content[0] });
    } else if (item.type === 'function_call') {
      ev('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      ev('response.function_call_arguments.delta', { output_index, item_id: item.id, delta: item.arguments });
      ev('response.function_call_arguments.done', { output_index, item_id: item.id, arguments: item.arguments });
    } else if (item.type === 'tool_search_call') {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress' } });
    } else {
      ev('response.output_item.added', { output_index, item: { ...item, input: '', status: 'in_progress' } });
      ev('response.custom_tool_call_input.delta', { output_index, item_id: item.id, delta: item.input });
      ev('response.custom_tool_call_input.done', { output_index, item_id: item.id, input: item.input });
    }
    ev('response.output_item.done', { output_index, item });
  });
  ev('response.completed', { response: { ...base, status: 'completed', output: items, usage } });
  res.end();
  return items;
}

// OpenAI Chat Completions, streaming (SSE chunks, then `[DONE]`) or not.
function chatReply(res, body, action) {
  const id = rid('chatcmpl-');
  const model = body.model || 'scripted';
  const created = Math.floor(Date.now() / 1000);
  const toolCalls = action.kind === 'final' ? [] : action.calls.map((c, index) => ({ index, id: rid('call_'), type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } }));
  const finish = action.kind === 'final' ? 'stop' : 'tool_calls';
  const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
  if (!body.stream) {
    const message = action.kind === 'final'
      ? { role: 'assistant', content: action.text }
      : { role: 'assistant', content: null, tool_calls: toolCalls.map(({ index, ...c }) => c) };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return message;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = (delta, finish_reason = null, extra = {}) => sse(res, null, { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }], ...extra });
  chunk({ role: 'assistant', content: '' });
  if (action.kind === 'final') {
    for (const piece of chunks(action.text)) chunk({ content: piece });
  } else {
    for (const c of toolCalls) chunk({ tool_calls: [c] });
  }
  chunk({}, finish);
  if (body.stream_options?.include_usage) sse(res, null, { id, object: 'chat.completion.chunk', created, model, choices: [], usage });
  res.write('data: [DONE]\n\n');
  res.end();
  return toolCalls;
}

function geminiCandidate(parts, finish) {
  const c = { content: { role: 'model', parts }, index: 0 };
  if (finish) c.finishReason = finish;
  return c;
}

function geminiReply(res, body, action, streaming, modelVersion) {
  const usageMetadata = { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 };
  const parts = action.kind === 'final'
    ? [{ text: action.text }]
    : action.calls.map((c) => ({ functionCall: { name: c.name, args: c.input } }));
  const responseId = rid('');
  if (!streaming) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ candidates: [geminiCandidate(parts, 'STOP')], usageMetadata, modelVersion, responseId }));
    return parts;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  if (action.kind === 'final') {
    const pieces = chunks(action.text);
    pieces.forEach((p, i) => sse(res, null, { candidates: [geminiCandidate([{ text: p }], i === pieces.length - 1 ? 'STOP' : undefined)], usageMetadata, modelVersion, responseId }));
  } else {
    sse(res, null, { candidates: [geminiCandidate(parts, 'STOP')], usageMetadata, modelVersion, responseId });
  }
  res.end();
  return parts;
}

// Minimal value satisfying a JSON schema (for Gemini's JSON-mode helper calls).
function sampleFromSchema(schema, key) {
  if (!schema || typeof schema !== 'object') return null;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const t = typeof type === 'string' ? type.toLowerCase() : undefined;
  if (schema.enum?.length) {
    if (key === 'next_speaker' && schema.enum.includes('user')) return 'user';
    return schema.enum[0];
  }
  if (t === 'object' || schema.properties) {
    const o = {};
    for (const [k, v] of Object.entries(schema.properties || {})) o[k] = sampleFromSchema(v, k);
    return o;
  }
  if (t === 'array') return [];
  if (t === 'boolean') return false;
  if (t === 'number' || t === 'integer') return 0;
  if (key === 'next_speaker') return 'user';
  return 'scripted';
}

// ---------------------------------------------------------------------------

// The agents that speak Chat Completions (one at a time per server).
const CHAT_AGENTS = ['opencode', 'kilo', 'qwen', 'droid', 'copilot', 'cline'];

export async function startModelServer({ script, project, port = 0, host = '127.0.0.1', logFile, dumpDir, agent: chatAgent = 'opencode' } = {}) {
  if (!script) throw new Error('script required');
  project = path.resolve(project || process.cwd());
  const events = [];
  let reqNo = 0;
  if (dumpDir) fs.mkdirSync(dumpDir, { recursive: true });
  const log = (rec) => {
    events.push(rec);
    if (logFile) fs.appendFileSync(logFile, JSON.stringify(rec) + '\n');
  };

  const server = http.createServer((req, res) => {
    const chunksIn = [];
    req.on('data', (c) => chunksIn.push(c));
    req.on('end', () => {
      const n = ++reqNo;
      const raw = Buffer.concat(chunksIn).toString('utf8');
      const rec = { n, t: Date.now(), method: req.method, url: req.url };
      if (dumpDir) {
        fs.writeFileSync(path.join(dumpDir, `${String(n).padStart(4, '0')}-req.json`), JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: raw }, null, 1));
      }
      let body = {};
      if (raw) { try { body = JSON.parse(raw); } catch { body = {}; } }
      try {
        handle(req, res, body, rec);
      } catch (err) {
        rec.error = String(err?.stack || err);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      }
      log(rec);
    });
  });

  function handle(req, res, body, rec) {
    const u = new URL(req.url, 'http://x');
    const p = u.pathname;
    // ---- Anthropic
    if (req.method === 'POST' && /\/v1\/messages\/count_tokens$/.test(p)) {
      rec.kind = 'anthropic.count_tokens';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 100 }));
      return;
    }
    if (req.method === 'POST' && /\/v1\/messages$/.test(p)) {
      rec.kind = 'anthropic.messages';
      rec.model = body.model;
      rec.stream = !!body.stream;
      const info = analyzeAnthropic(body);
      return dispatch('anthropic', info, rec, (action) => anthropicReply(res, body, action));
    }
    // ---- OpenAI Chat Completions
    if (req.method === 'POST' && /\/chat\/completions$/.test(p)) {
      rec.kind = 'openai.chat';
      rec.model = body.model;
      rec.stream = !!body.stream;
      const info = analyzeChat(body);
      return dispatch('chat', info, rec, (action) => chatReply(res, body, action));
    }
    // ---- OpenAI Responses
    if (req.method === 'POST' && /\/responses$/.test(p)) {
      rec.kind = 'openai.responses';
      rec.model = body.model;
      const info = analyzeResponses(body);
      return dispatch('responses', info, rec, (action) => responsesReply(res, body, action));
    }
    if (req.method === 'GET' && /\/models$/.test(p)) {
      rec.kind = 'models';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
      return;
    }
    // ---- Gemini
    const gm = p.match(/\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens|embedContent|batchEmbedContents)$/);
    if (req.method === 'POST' && gm) {
      const [, model, method] = gm;
      rec.kind = `gemini.${method}`;
      rec.model = model;
      if (method === 'countTokens') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ totalTokens: 100 }));
        return;
      }
      if (method === 'embedContent' || method === 'batchEmbedContents') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(method === 'embedContent' ? { embedding: { values: [0, 0, 0] } } : { embeddings: [] }));
        return;
      }
      const streaming = method === 'streamGenerateContent';
      const gc = body.generationConfig || body.config || {};
      const schema = gc.responseJsonSchema || gc.responseSchema;
      const info = analyzeGemini(body);
      if (schema || gc.responseMimeType === 'application/json') {
        rec.aux = 'json-mode';
        const text = JSON.stringify(sampleFromSchema(schema || { type: 'object' }));
        rec.reply = [{ text }];
        geminiReply(res, body, { kind: 'final', text }, streaming, model);
        return;
      }
      return dispatch('gemini', info, rec, (action) => geminiReply(res, body, action, streaming, model));
    }
    rec.kind = 'unknown';
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `scripted model server: no route for ${req.method} ${p}` } }));
  }

  function dispatch(api, info, rec, reply) {
    const agent = api === 'chat' ? chatAgent : AGENT_BY_API[api];
    rec.agent = agent;
    rec.turn = info.turn;
    rec.n_results = info.results.length;
    rec.n_tools = info.tools.length;
    if (info.turn === null || info.tools.length === 0) {
      rec.aux = info.turn === null ? 'no-marker' : 'no-tools';
      const action = { kind: 'final', text: 'OK.' };
      rec.reply = reply(action);
      return;
    }
    rec.results = info.results.map(({ full, ...r }) => r);
    const action = nextAction(script, agent, info.turn, info.results.length);
    if (action.kind === 'calls') {
      action.calls = action.calls.map((c) => translate(c, agent, info, project));
      rec.step = action.stepIndex;
      rec.calls = action.calls.map((c) => (c.toolSearch ? { name: 'tool_search', input: c.toolSearch } : { name: c.namespace ? `${c.namespace}.${c.name}` : c.name === 'tool_call' && c.input?.name ? `tool_call:${c.input.name}` : c.name, input: c.input }));
    } else {
      rec.final = action.text;
    }
    reply(action);
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const actual = server.address().port;
  return {
    port: actual,
    url: `http://${host}:${actual}`,
    events,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}

// ---------------------------------------------------------------------------
// CLI

function parseArgs(argv) {
  const a = {};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (!k.startsWith('--')) continue;
    const key = k.slice(2);
    const v = argv[i + 1] && !argv[i + 1].startsWith('--') ? argv[++i] : true;
    a[key] = v;
  }
  return a;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('model-server.mjs')) {
  const args = parseArgs(process.argv.slice(2));
  if (!args.script) {
    console.error('usage: node model-server.mjs --script script.json [--project DIR] [--port N] [--log FILE] [--dump-dir DIR]');
    process.exit(2);
  }
  const srv = await startModelServer({
    script: loadScript(args.script),
    project: args.project,
    port: Number(args.port || 0),
    logFile: args.log,
    dumpDir: args['dump-dir'],
  });
  console.log(JSON.stringify({ port: srv.port, url: srv.url }));
  const stop = () => srv.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
