#!/usr/bin/env node
// Drive one REAL coding agent (Claude Code, Codex CLI or Gemini CLI) offline
// against the scripted model server, with every hook event wired to one
// command, for a multi-turn resumed session.  Prints a JSON summary.
//
//   node tests/agents/run-agent.mjs --agent claude|codex|gemini \
//        --project DIR --out DIR [--hook-cmd "CMD"] [--turns N] \
//        [--timeout 120] [--script FILE] [--no-parallel] [--hook-sleep-ms N] \
//        [--samples FILE] [--dump] [--hook-copies N] [--events E1,E2]
//
// --hook-cmd  default: the payload recorder (record-hook.mjs) writing to
//             $HOOK_LOG (default OUT/hooks.jsonl).
// --script    a model script (see model-server.mjs); default: the built-in
//             3-turn scenario (more turns with --turns N > 3).
// --samples   also write a copy of the hook log with strings cut to 500 chars.
// --dump      write every model request body to OUT/requests/.
// --hook-copies N   register the hook N times per event (concurrency probe).
// --hook-sleep-ms N make record-hook.mjs sleep N ms (concurrency probe).
// --events    comma-separated subset of hook events to register.
// --no-hooks  write no hook settings (they are already in the project, e.g.
//             from `rewind install --project`).
// --save-turns DIR  copy the project to DIR/turn-N after each turn (without
//             the agents' config directories), for byte-for-byte checks.
// --install-plugin SRC  before the first turn, install rewind the agent's own
//             way: claude `plugin marketplace add SRC` + `plugin install
//             rewind@rewind`; gemini `extensions install SRC --consent`.
// --install-plugin-at SRC  claude: the same in one command, as README.md
//             gives it (`plugin install rewind --marketplace SRC`).
// --uninstall-plugin  after the last turn, take it out again (claude `plugin
//             uninstall` + `plugin marketplace remove`; gemini `extensions
//             uninstall`). The summary holds the agent's settings files as
//             they were before the install and after the uninstall.
// --continue JSON  run one turn (--first-turn N, default --turns) with the
//             command `rewind restore --conversation` printed (a JSON argv:
//             `["claude","--resume",ID]`, `["codex","resume",ID]`,
//             `["gemini","--session-file",FILE]`), given the prompt and the
//             agent's headless flags, instead of the scenario's own argv.
// --setup-cmd CMD  a shell command run once the agent's configuration is
//             written, before the first turn, with the agent's environment
//             (HOME, CODEX_HOME, CLAUDE_CONFIG_DIR, …), e.g. `rewind install
//             codex --mcp`; it must exit 0.
// Exit status: 0 if every turn exited 0 and every per-turn expectation held.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startModelServer, loadScript } from './model-server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN = {
  claude: process.env.CLAUDE_BIN || path.join(HERE, 'node_modules/.bin/claude'),
  codex: process.env.CODEX_BIN || path.join(HERE, 'node_modules/.bin/codex'),
  gemini: process.env.GEMINI_BIN || path.join(HERE, 'node_modules/.bin/gemini'),
  opencode: process.env.OPENCODE_BIN || path.join(HERE, 'node_modules/.bin/opencode'),
  kilo: process.env.KILO_BIN || path.join(HERE, 'node_modules/.bin/kilo'),
  qwen: process.env.QWEN_BIN || path.join(HERE, 'node_modules/.bin/qwen'),
  droid: process.env.DROID_BIN || path.join(HERE, 'node_modules/.bin/droid'),
  copilot: process.env.COPILOT_BIN || path.join(HERE, 'node_modules/.bin/copilot'),
  cline: process.env.CLINE_BIN || path.join(HERE, 'node_modules/.bin/cline'),
};

// Every hook event each agent version understands (from their own code:
// Claude Code 2.1.331 hook schema, codex-rs HookEventName in 0.169.0, Gemini
// CLI 0.61.0 HookEventName enum).
export const HOOK_EVENTS = {
  claude: [
    'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'Notification',
    'UserPromptSubmit', 'UserPromptExpansion', 'SessionStart', 'SessionEnd', 'Stop', 'StopFailure',
    'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact', 'PreModelSwitch', 'PostModelSwitch',
    'PermissionRequest', 'PermissionDenied', 'Setup', 'TeammateIdle', 'TaskCreated', 'TaskCompleted',
    'Elicitation', 'ElicitationResult', 'ConfigChange', 'WorktreeCreate', 'WorktreeRemove',
    'InstructionsLoaded', 'CwdChanged', 'FileChanged', 'DirectoryAdded', 'MessageDisplay',
  ],
  codex: [
    'SessionStart', 'SessionEnd', 'UserPromptSubmit', 'PreModelRequest', 'PreToolUse', 'PermissionRequest',
    'PostToolUse', 'PreCompact', 'PostCompact', 'SubagentStart', 'SubagentStop', 'Stop', 'Interrupt',
  ],
  gemini: [
    'SessionStart', 'SessionEnd', 'BeforeAgent', 'AfterAgent', 'BeforeModel', 'AfterModel',
    'BeforeToolSelection', 'BeforeTool', 'AfterTool', 'PreCompress', 'Notification',
  ],
  // What rewind's plugin (src/app/install/opencode_plugin.js) hands on:
  // OpenCode 1.18's plugin hooks and the two bus events it records.
  opencode: ['chat.message', 'tool.execute.before', 'tool.execute.after', 'session.created', 'session.idle'],
  kilo: ['chat.message', 'tool.execute.before', 'tool.execute.after', 'session.created', 'session.idle'],
  // Qwen Code 0.24.4 (bundled docs/features/hooks.md), Claude Code's names.
  qwen: [
    'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'UserPromptSubmit', 'UserPromptExpansion',
    'SessionStart', 'SessionEnd', 'MessageDisplay', 'Stop', 'StopFailure', 'SubagentStart', 'SubagentStop',
    'PreCompact', 'PostCompact', 'Notification', 'PermissionRequest', 'PermissionDenied', 'TodoCreated',
    'TodoCompleted', 'InstructionsLoaded',
  ],
  // Factory's Droid 0.215.0 (the hook events its binary lists).
  droid: ['PreToolUse', 'PostToolUse', 'Notification', 'UserPromptSubmit', 'Stop', 'SubagentStop', 'PreCompact', 'SessionStart', 'SessionEnd'],
  // GitHub Copilot CLI 1.0.102 under Claude Code's (PascalCase) names: it
  // then sends Claude-shaped payloads. Its own camelCase names
  // (sessionStart, userPromptSubmitted, preToolUse, postToolUse,
  // postToolUseFailure, agentStop, subagentStop, errorOccurred, sessionEnd)
  // get camelCase payloads that do not name their event.
  copilot: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'SubagentStop', 'SessionEnd', 'Notification', 'PreCompact', 'ErrorOccurred'],
  // Cline CLI 3.0.65: the hook file names (@cline/core HookConfigFileName).
  // PreCompact is a known name that maps to no event: it never runs.
  cline: ['TaskStart', 'TaskResume', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'TaskComplete', 'TaskCancel', 'TaskError', 'PreCompact', 'SessionShutdown'],
};

// Cline's payloads name their event in `hookName`: the hook file it ran.
const CLINE_HOOK_FILE = {
  agent_start: 'TaskStart', agent_resume: 'TaskResume', prompt_submit: 'UserPromptSubmit', tool_call: 'PreToolUse',
  tool_result: 'PostToolUse', agent_end: 'TaskComplete', agent_abort: 'TaskCancel', agent_error: 'TaskError',
  session_shutdown: 'SessionShutdown',
};

// The agents' own configuration directories inside a project.
export const AGENT_DIRS = ['.claude', '.codex', '.gemini', '.opencode', '.kilo', '.qwen', '.factory', '.github', '.clinerules'];

// ---------------------------------------------------------------------------
// args

function parseArgs(argv) {
  const a = { turns: 3, timeout: 120, parallel: true };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`missing value for ${k}`);
      return argv[++i];
    };
    switch (k) {
      case '--agent': a.agent = next(); break;
      case '--project': a.project = next(); break;
      case '--hook-cmd': a.hookCmd = next(); break;
      case '--turns': a.turns = Number(next()); break;
      case '--out': a.out = next(); break;
      case '--timeout': a.timeout = Number(next()); break;
      case '--script': a.script = next(); break;
      case '--no-parallel': a.parallel = false; break;
      case '--hook-sleep-ms': a.hookSleepMs = Number(next()); break;
      case '--samples': a.samples = next(); break;
      case '--dump': a.dump = true; break;
      case '--events': a.events = next().split(',').filter(Boolean); break;
      case '--hook-copies': a.hookCopies = Number(next()); break;
      case '--save-turns': a.saveTurns = next(); break;
      case '--no-hooks': a.noHooks = true; break;
      case '--install-plugin': a.installPlugin = next(); break;
      case '--install-plugin-at': a.installPlugin = next(); a.pluginOneCommand = true; break;
      case '--uninstall-plugin': a.uninstallPlugin = true; break;
      case '--setup-cmd': a.setupCmd = next(); break;
      case '--continue': a.continueArgv = JSON.parse(next()); break;
      case '--first-turn': a.firstTurn = Number(next()); break;
      case '-h': case '--help': a.help = true; break;
      default: throw new Error(`unknown argument ${k}`);
    }
  }
  return a;
}

// ---------------------------------------------------------------------------
// The default scenario.  `expect` is checked on disk after each turn.

export function defaultScenario(turns = 3, parallel = true) {
  const w = (p, content) => ({ op: 'write', path: p, content });
  const writes = [w('a.txt', 'alpha\n'), w('b.txt', 'bravo\n')];
  const t = [
    {
      prompt: 'Create a.txt and b.txt, then generate gen/ with three files using the shell.',
      steps: [
        ...(parallel ? [writes] : writes),
        { op: 'shell', command: 'mkdir -p gen && for i in 1 2 3; do echo "gen $i" > gen/f$i.txt; done' },
      ],
      final: 'Turn 1 done: wrote a.txt, b.txt and gen/f1..f3.txt.',
      expect: { files: { 'a.txt': 'alpha\n', 'b.txt': 'bravo\n', 'gen/f1.txt': 'gen 1\n', 'gen/f2.txt': 'gen 2\n', 'gen/f3.txt': 'gen 3\n' }, absent: [] },
    },
    {
      prompt: 'Edit b.txt, delete gen/, and move a.txt into moved/.',
      steps: [
        // OpenCode's and Qwen Code's edit tools refuse a file not read in this session.
        { op: 'read', path: 'b.txt', only: ['claude', 'opencode', 'kilo', 'qwen', 'droid', 'copilot', 'cline'] },
        { op: 'edit', path: 'b.txt', old: 'bravo', new: 'bravo edited' },
        // Codex's built-in exec policy rejects any `rm -f`-style command in
        // every approval mode ("rm -f style commands are not permitted"), so
        // codex gets `rm -r`.
        { op: 'shell', command: 'rm -rf gen', only: ['claude', 'gemini', 'opencode', 'kilo', 'qwen', 'droid', 'copilot', 'cline'] },
        { op: 'shell', command: 'rm -r gen', only: ['codex'] },
        { op: 'shell', command: 'mkdir -p moved && mv a.txt moved/a.txt' },
      ],
      final: 'Turn 2 done: edited b.txt, removed gen/, moved a.txt to moved/a.txt.',
      expect: { files: { 'b.txt': 'bravo edited\n', 'moved/a.txt': 'alpha\n' }, absent: ['gen', 'a.txt'] },
    },
    {
      prompt: 'Write c.txt and edit moved/a.txt.',
      steps: [
        w('c.txt', 'charlie\n'),
        { op: 'read', path: 'moved/a.txt', only: ['claude', 'opencode', 'kilo', 'qwen', 'droid', 'copilot', 'cline'] },
        { op: 'edit', path: 'moved/a.txt', old: 'alpha', new: 'alpha edited' },
      ],
      final: 'Turn 3 done: wrote c.txt and edited moved/a.txt.',
      expect: { files: { 'c.txt': 'charlie\n', 'moved/a.txt': 'alpha edited\n', 'b.txt': 'bravo edited\n' }, absent: ['gen', 'a.txt'] },
    },
  ];
  for (let k = 4; k <= turns; k++) {
    const f = `extra-${k}.txt`;
    t.push({
      prompt: `Write ${f} and edit it.`,
      steps: [w(f, `extra ${k}\n`), { op: 'read', path: f, only: ['claude', 'opencode', 'kilo', 'qwen', 'droid', 'copilot', 'cline'] }, { op: 'edit', path: f, old: `extra ${k}`, new: `extra ${k} edited` }],
      final: `Turn ${k} done.`,
      expect: { files: { [f]: `extra ${k} edited\n` }, absent: [] },
    });
  }
  return { turns: t.slice(0, turns) };
}

// ---------------------------------------------------------------------------
// helpers

function mkdirp(d) { fs.mkdirSync(d, { recursive: true }); }
function readJson(f, dflt) { try { return JSON.parse(fs.readFileSync(f, 'utf8')); } catch { return dflt; } }
function writeJson(f, v) { mkdirp(path.dirname(f)); fs.writeFileSync(f, JSON.stringify(v, null, 2) + '\n'); }
function tomlStr(s) { return JSON.stringify(s); }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function groupAlive(pgid) {
  try { process.kill(-pgid, 0); return true; } catch { return false; }
}

// Environment the agents run in: the caller's, minus anything that would leak
// another agent configuration or credentials in, plus scratch HOME/XDG dirs.
function baseEnv(out) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(ANTHROPIC_|CLAUDE|OPENAI_|CODEX_|GEMINI_|GOOGLE_|VERTEX|AWS_|AZURE_|XDG_|OPENCODE|KILO|QWEN|FACTORY|DROID|COPILOT|CLINE_|GH_|GITHUB_|HTTPS?_PROXY|NO_PROXY|NODE_OPTIONS|NPM_CONFIG_)/i.test(k)) continue;
    env[k] = v;
  }
  const home = path.join(out, 'home');
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.local/state'),
    NO_COLOR: '1',
    CI: '1',
  });
  for (const d of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME']) mkdirp(env[d]);
  return env;
}

// The command(s) registered for each event.  With --hook-copies N > 1 the
// same command is registered N times, each with a distinct trailing argument
// (`copy-2`, ...) so that agents that de-duplicate identical commands still
// run them all; used to observe whether an agent runs an event's hooks
// concurrently.
function hookCommands(cmd, copies = 1) {
  return Array.from({ length: Math.max(1, copies) }, (_, i) => (i === 0 ? cmd : `${cmd} copy-${i + 1}`));
}

function claudeHooks(events, cmds) {
  const hooks = {};
  for (const e of events) hooks[e] = [{ hooks: cmds.map((command) => ({ type: 'command', command, timeout: 60 })) }];
  return hooks;
}

// ---------------------------------------------------------------------------
// per-agent setup: config files + how to run a turn

function setupClaude({ project, out, url, hookCmds, events, env }) {
  const cfgDir = path.join(out, 'claude-config');
  mkdirp(cfgDir);
  const settingsFile = path.join(project, '.claude', 'settings.json');
  if (hookCmds.length) {
    const settings = readJson(settingsFile, {});
    settings.hooks = claudeHooks(events, hookCmds);
    writeJson(settingsFile, settings);
  }
  Object.assign(env, {
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: 'dummy',
    CLAUDE_CONFIG_DIR: cfgDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  });
  if (process.getuid?.() === 0) env.IS_SANDBOX = '1';
  const sessionId = crypto.randomUUID();
  return {
    configFiles: [settingsFile, path.join(cfgDir, 'settings.json')],
    sessionId,
    plugin: {
      install: (src, oneCommand) => (oneCommand
        ? [['plugin', 'install', 'rewind', '--marketplace', src]]
        : [['plugin', 'marketplace', 'add', src], ['plugin', 'install', 'rewind@rewind']]),
      uninstall: () => [['plugin', 'uninstall', 'rewind@rewind'], ['plugin', 'marketplace', 'remove', 'rewind']],
    },
    argv: (turn, prompt) => [
      '-p', prompt,
      '--permission-mode', 'bypassPermissions',
      '--output-format', 'json',
      ...(turn === 1 ? ['--session-id', sessionId] : ['--resume', sessionId]),
    ],
    continueArgv: (cont, prompt) => [...cont.slice(1), '-p', prompt, '--permission-mode', 'bypassPermissions', '--output-format', 'json'],
    parse: (stdout) => {
      const j = readJsonText(stdout);
      return { session_id: j?.session_id, is_error: j?.is_error, result: j?.result, subtype: j?.subtype, num_turns: j?.num_turns };
    },
  };
}

function setupCodex({ project, out, url, hookCmds, events, env }) {
  const codexHome = path.join(out, 'codex-home');
  mkdirp(codexHome);
  const realProject = fs.realpathSync(project);
  const toml = `# written by tests/agents/run-agent.mjs
model = "gpt-5.5"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"
model_reasoning_effort = "low"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = ${tomlStr(url + '/v1')}
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
supports_websockets = false

[features]
plugins = false
hooks = true

[analytics]
enabled = false

[projects.${tomlStr(realProject)}]
trust_level = "trusted"
`;
  fs.writeFileSync(path.join(codexHome, 'config.toml'), toml);
  const hooksFile = path.join(project, '.codex', 'hooks.json');
  const hooks = {};
  // codex clamps SessionEnd and Interrupt hooks to 3 s (and warns if asked for more)
  for (const e of events) hooks[e] = [{ hooks: hookCmds.map((command) => ({ type: 'command', command, timeout: ['SessionEnd', 'Interrupt'].includes(e) ? 3 : 60 })) }];
  if (hookCmds.length) writeJson(hooksFile, { hooks });
  Object.assign(env, { CODEX_HOME: codexHome, SCRIPTED_API_KEY: 'dummy', RUST_LOG: env.RUST_LOG || 'warn' });
  let threadId = null;
  const common = ['--json', '--dangerously-bypass-approvals-and-sandbox', '--dangerously-bypass-hook-trust', '--skip-git-repo-check'];
  return {
    configFiles: [hooksFile, path.join(codexHome, 'config.toml')],
    get sessionId() { return threadId; },
    argv: (turn, prompt) => {
      if (turn === 1 || !threadId) return ['exec', ...common, prompt];
      return ['exec', 'resume', ...common, threadId, prompt];
    },
    // `codex resume ID` is the terminal's; `codex exec resume ID PROMPT` the same headless.
    continueArgv: (cont, prompt) => (cont[1] === 'resume' ? ['exec', 'resume', ...common, ...cont.slice(2), prompt] : ['exec', ...common, ...cont.slice(1), prompt]),
    parse: (stdout) => {
      const evs = stdout.split('\n').filter((l) => l.trim().startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
      const started = evs.find((e) => e.type === 'thread.started');
      if (started?.thread_id && !threadId) threadId = started.thread_id;
      const failed = evs.filter((e) => /failed|error/.test(e.type));
      const items = evs.filter((e) => e.type === 'item.completed').map((e) => e.item);
      return {
        session_id: started?.thread_id,
        event_types: [...new Set(evs.map((e) => e.type))],
        items: items.map((i) => ({ type: i.type, status: i.status, ...(i.command ? { command: i.command } : {}), ...(i.changes ? { changes: i.changes } : {}), ...(i.text ? { text: i.text.slice(0, 200) } : {}) })),
        errors: failed.map((e) => JSON.stringify(e).slice(0, 500)),
      };
    },
  };
}

function setupGemini({ project, out, url, hookCmds, events, env }) {
  const userSettings = path.join(env.HOME, '.gemini', 'settings.json');
  writeJson(userSettings, {
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    telemetry: { enabled: false, logPrompts: false },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, disableAutoUpdate: true, disableUpdateNag: true, checkpointing: { enabled: false } },
    ide: { enabled: false, hasSeenNudge: true },
    ui: { hideTips: true, hideBanner: true },
  });
  const settingsFile = path.join(project, '.gemini', 'settings.json');
  const settings = readJson(settingsFile, {});
  const hooks = {};
  for (const e of events) hooks[e] = [{ hooks: hookCmds.map((command, i) => ({ type: 'command', command, name: `rewind-${e}${i ? `-${i + 1}` : ''}`, timeout: 60000 })) }];
  if (hookCmds.length) {
    settings.hooksConfig = { ...(settings.hooksConfig || {}), enabled: true };
    settings.hooks = hooks;
    writeJson(settingsFile, settings);
  }
  Object.assign(env, {
    GOOGLE_GEMINI_BASE_URL: url,
    GEMINI_API_KEY: 'dummy',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    GEMINI_CLI_NO_RELAUNCH: 'true',
  });
  const sessionId = crypto.randomUUID();
  return {
    configFiles: [settingsFile, userSettings],
    sessionId,
    plugin: {
      // Gemini CLI rewrites its user settings on every `extensions` command
      // (0.61.0 drops keys it no longer knows, here general.disableAutoUpdate
      // and disableUpdateNag, and the final newline), with or without an
      // extension: one `list` first, so that the settings captured before
      // the install differ from those after the uninstall only by what
      // install and uninstall did.
      prepare: [['extensions', 'list']],
      install: (src) => [['extensions', 'install', src, '--consent']],
      uninstall: () => [['extensions', 'uninstall', 'rewind']],
    },
    argv: (turn, prompt) => [
      '-p', prompt,
      '-m', 'gemini-2.5-flash',
      '--approval-mode', 'yolo',
      '--output-format', 'json',
      ...(turn === 1 ? ['--session-id', sessionId] : ['--resume', sessionId]),
    ],
    continueArgv: (cont, prompt) => [...cont.slice(1), '-p', prompt, '-m', 'gemini-2.5-flash', '--approval-mode', 'yolo', '--output-format', 'json'],
    parse: (stdout) => {
      const j = readJsonText(stdout);
      return { session_id: j?.session_id ?? j?.sessionId, response: typeof j?.response === 'string' ? j.response.slice(0, 200) : undefined, error: j?.error, stats_tools: j?.stats?.tools?.byName ? Object.keys(j.stats.tools.byName) : undefined };
    },
  };
}

// OpenCode 1.18 (and Kilo, built on it): no hook settings; rewind's plugin
// (src/app/install/opencode_plugin.js, the very file `rewind install`
// writes) running the hook command through `sh -c`. The model is a provider
// of the bundled @ai-sdk/openai-compatible pointed at the model server
// (AGENT-FACTS.md "OpenCode").
export function opencodePlugin(agent, argv) {
  const template = fs.readFileSync(path.join(HERE, '../../src/app/install/opencode_plugin.js'), 'utf8');
  return template.replaceAll('__REWIND_AGENT__', agent).replaceAll('__REWIND_ARGV__', JSON.stringify(argv));
}

function setupOpenCode({ agent, project, out, url, hookCmds, env }) {
  const [dirName, configName] = agent === 'kilo' ? ['.kilo', 'kilo'] : ['.opencode', 'opencode'];
  const configFile = path.join(env.XDG_CONFIG_HOME, configName, `${configName}.json`);
  writeJson(configFile, {
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted',
        options: { baseURL: `${url}/v1`, apiKey: '{env:SCRIPTED_API_KEY}' },
        models: { 'scripted-model': { name: 'Scripted', tool_call: true, limit: { context: 200000, output: 8192 } } },
      },
    },
    model: 'scripted/scripted-model',
    small_model: 'scripted/scripted-model',
    autoupdate: false,
    share: 'disabled',
    // Only the scripted provider: no models fetched from elsewhere.
    enabled_providers: ['scripted'],
    permission: { edit: 'allow', bash: 'allow', webfetch: 'allow', external_directory: 'allow' },
  });
  const pluginFile = path.join(project, dirName, 'plugins', 'record.js');
  if (hookCmds.length) {
    mkdirp(path.dirname(pluginFile));
    fs.writeFileSync(pluginFile, hookCmds.map((c, i) => opencodePlugin(agent, ['/bin/sh', '-c', c]).replace('export const RewindPlugin', `export const RewindPlugin${i}`)).join('\n'));
  }
  const upper = agent.toUpperCase();
  Object.assign(env, {
    SCRIPTED_API_KEY: 'dummy',
    PWD: project,
    [`${upper}_DISABLE_MODELS_FETCH`]: '1',
    [`${upper}_DISABLE_AUTOUPDATE`]: '1',
    [`${upper}_DISABLE_SHARE`]: '1',
    // A local plugin makes it npm-install its plugin package at every start;
    // offline that waits ~70 s unless npm gives up at once.
    npm_config_offline: 'true',
    // Kilo: no PostHog telemetry (it waits for its flush at exit).
    ...(agent === 'kilo' ? { KILO_TELEMETRY_LEVEL: 'off' } : {}),
  });
  let sessionId = null;
  const common = ['--dir', project, '--format', 'json'];
  return {
    configFiles: [pluginFile, configFile],
    get sessionId() { return sessionId; },
    argv: (turn, prompt) => ['run', ...common, ...(turn === 1 || !sessionId ? [] : ['--session', sessionId]), prompt],
    continueArgv: (cont, prompt) => ['run', ...common, ...cont.slice(1), prompt],
    parse: (stdout) => {
      const evs = stdout.split('\n').filter((l) => l.trim().startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
      const sid = evs.map((e) => e.sessionID ?? e.part?.sessionID ?? e.properties?.sessionID).find(Boolean);
      if (sid && !sessionId) sessionId = sid;
      return { session_id: sid, event_types: [...new Set(evs.map((e) => e.type))], errors: evs.filter((e) => /error/.test(e.type || '')).map((e) => JSON.stringify(e).slice(0, 500)) };
    },
  };
}

// Qwen Code 0.24 (a Gemini CLI fork): Claude Code's hook shape in
// `.qwen/settings.json` (timeout in seconds), the model through its OpenAI
// auth type (Chat Completions).
function setupQwen({ project, url, hookCmds, events, env }) {
  const userSettings = path.join(env.HOME, '.qwen', 'settings.json');
  writeJson(userSettings, {
    security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
    model: { name: 'scripted-model' },
    telemetry: { enabled: false, logPrompts: false },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, disableAutoUpdate: true, disableUpdateNag: true, checkpointing: { enabled: false } },
    ide: { enabled: false, hasSeenNudge: true },
    ui: { hideTips: true, hideBanner: true },
  });
  const settingsFile = path.join(project, '.qwen', 'settings.json');
  if (hookCmds.length) {
    const settings = readJson(settingsFile, {});
    const hooks = {};
    for (const e of events) hooks[e] = [{ hooks: hookCmds.map((command, i) => ({ type: 'command', command, name: `rewind-${e}${i ? `-${i + 1}` : ''}`, timeout: 60 })) }];
    settings.hooks = hooks;
    writeJson(settingsFile, settings);
  }
  Object.assign(env, {
    OPENAI_API_KEY: 'dummy',
    OPENAI_BASE_URL: `${url}/v1`,
    OPENAI_MODEL: 'scripted-model',
    QWEN_CODE_NO_RELAUNCH: 'true',
  });
  const sessionId = crypto.randomUUID();
  const common = ['--approval-mode', 'yolo', '--output-format', 'json', '--auth-type', 'openai', '-m', 'scripted-model'];
  return {
    configFiles: [settingsFile, userSettings],
    sessionId,
    argv: (turn, prompt) => [...common, ...(turn === 1 ? ['--session-id', sessionId] : ['--resume', sessionId]), prompt],
    continueArgv: (cont, prompt) => [...cont.slice(1), ...common, prompt],
    parse: (stdout) => {
      const j = readJsonText(stdout);
      const last = Array.isArray(j) ? j[j.length - 1] : j;
      return { session_id: last?.session_id ?? last?.sessionId, result: typeof last?.result === 'string' ? last.result.slice(0, 200) : undefined, is_error: last?.is_error };
    },
  };
}

// Factory's Droid 0.215: Claude Code's hook shape in `.factory/hooks.json`;
// the model a "custom model" (BYOK) of `~/.factory/settings.json` speaking
// Chat Completions to the model server: no Factory login needed.
function setupDroid({ project, url, hookCmds, events, env }) {
  const userSettings = path.join(env.HOME, '.factory', 'settings.json');
  writeJson(userSettings, {
    customModels: [{ model: 'scripted-model', displayName: 'Scripted', baseUrl: `${url}/v1`, apiKey: 'dummy', provider: 'generic-chat-completion-api', maxOutputTokens: 8192 }],
  });
  const hooksFile = path.join(project, '.factory', 'hooks.json');
  // The events at the top level: Droid ignores a `hooks` key there.
  if (hookCmds.length) writeJson(hooksFile, claudeHooks(events, hookCmds));
  // Factory's API and telemetry go to the model server, which answers
  // 404: `exec -s ID` asks the API for the session first and, on a 404,
  // goes on with the local one (offline it fails instead).
  Object.assign(env, { FACTORY_API_BASE_URL: url, FACTORY_TELEMETRY_INGEST_BASE_URL: url });
  let sessionId = null;
  const common = ['--auto', 'high', '-o', 'json', '-m', 'custom:scripted-model', '--cwd', project];
  return {
    configFiles: [hooksFile, userSettings],
    get sessionId() { return sessionId; },
    argv: (turn, prompt) => ['exec', ...common, ...(turn === 1 || !sessionId ? [] : ['-s', sessionId]), prompt],
    continueArgv: (cont, prompt) => ['exec', ...common, ...cont.slice(1), prompt],
    parse: (stdout) => {
      const j = readJsonText(stdout);
      if (j?.session_id && !sessionId) sessionId = j.session_id;
      return { session_id: j?.session_id, is_error: j?.is_error, result: typeof j?.result === 'string' ? j.result.slice(0, 200) : undefined };
    },
  };
}

// GitHub Copilot CLI 1.0.102: no login with a "BYOK" provider
// (COPILOT_PROVIDER_*, COPILOT_OFFLINE), Chat Completions to the model
// server; hooks in `.github/hooks/*.json`, loaded in prompt mode (-p) only
// for a trusted folder.
function setupCopilot({ project, url, hookCmds, events, env }) {
  const realProject = fs.realpathSync(project);
  const config = path.join(env.HOME, '.copilot', 'config.json');
  writeJson(config, { trusted_folders: [realProject], trustedFolders: [realProject] });
  writeJson(path.join(env.HOME, '.copilot', 'settings.json'), { trusted_folders: [realProject], trustedFolders: [realProject], auto_update: false });
  const hooksFile = path.join(project, '.github', 'hooks', 'record.json');
  if (hookCmds.length) {
    const hooks = {};
    for (const e of events) hooks[e] = hookCmds.map((command) => ({ type: 'command', bash: command, timeoutSec: 60 }));
    writeJson(hooksFile, { version: 1, hooks });
  }
  Object.assign(env, {
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_PROVIDER_BASE_URL: `${url}/v1`,
    COPILOT_PROVIDER_API_KEY: 'dummy',
    COPILOT_MODEL: 'scripted-model',
    COPILOT_AUTO_UPDATE: 'false',
  });
  const sessionId = crypto.randomUUID();
  const common = ['--allow-all-tools', '--allow-all-paths', '--no-color'];
  return {
    configFiles: [hooksFile, config],
    sessionId,
    argv: (turn, prompt) => ['-p', prompt, ...common, ...(turn === 1 ? ['--session-id', sessionId] : ['--resume', sessionId])],
    continueArgv: (cont, prompt) => [...cont.slice(1), '-p', prompt, ...common],
    parse: (stdout) => ({ text: stdout.trim().slice(-300) }),
  };
}

// Cline CLI 3.0.65 (a Bun-compiled binary): hook *files* named after the
// event in `PROJECT/.clinerules/hooks/` (each a `#!/bin/sh` script running
// the hook command; with --hook-copies, copies `TaskStart.sh`,
// `TaskStart.bash`, …: the extension only picks the interpreter when there is
// no shebang); the model an `openai-compatible` provider in
// `~/.cline/data/settings/providers.json` (what `cline auth -p
// openai-compatible -k KEY -m MODEL -b URL` writes), Chat Completions.
// CLINE_SESSION_BACKEND_MODE=local: sessions in-process, no hub daemon
// (`cline --cline-hub-daemon`) left running after the turn.
const CLINE_HOOK_EXTS = ['', '.sh', '.bash', '.zsh', '.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.py', '.ps1'];
function setupCline({ project, url, hookCmds, events, env }) {
  const providers = path.join(env.HOME, '.cline', 'data', 'settings', 'providers.json');
  writeJson(providers, {
    version: 1,
    lastUsedProvider: 'openai-compatible',
    modes: {},
    providers: {
      'openai-compatible': {
        settings: { provider: 'openai-compatible', apiKey: 'dummy', model: 'scripted-model', baseUrl: `${url}/v1` },
        updatedAt: new Date().toISOString(),
        tokenSource: 'manual',
      },
    },
  });
  // Without the opt-out it resolves otel.cline.bot for its telemetry. It
  // still resolves data.cline.bot (PostHog feature flags): DNS only.
  const globalSettings = path.join(env.HOME, '.cline', 'data', 'settings', 'global-settings.json');
  writeJson(globalSettings, { telemetryOptOut: true, autoUpdateEnabled: false });
  const hooksDir = path.join(project, '.clinerules', 'hooks');
  const hookFiles = [];
  if (hookCmds.length) {
    if (hookCmds.length > CLINE_HOOK_EXTS.length) throw new Error(`cline: at most ${CLINE_HOOK_EXTS.length} hook copies`);
    mkdirp(hooksDir);
    for (const e of events) {
      hookCmds.forEach((cmd, i) => {
        const f = path.join(hooksDir, `${e}${CLINE_HOOK_EXTS[i]}`);
        fs.writeFileSync(f, `#!/bin/sh\n# written by tests/agents/run-agent.mjs\nexec /bin/sh -c ${shq(cmd)}\n`, { mode: 0o755 });
        hookFiles.push(f);
      });
    }
  }
  // CLINE_PROVIDER/CLINE_API_KEY/CLINE_MODEL: ACP mode (turns 2..N) otherwise
  // refuses `session/load`, "Authentication required: Call authenticate
  // before starting a session" (it restores only its own sign-in methods).
  Object.assign(env, {
    CLINE_SESSION_BACKEND_MODE: 'local', CLINE_NO_AUTO_UPDATE: '1',
    CLINE_PROVIDER: 'openai-compatible', CLINE_API_KEY: 'dummy', CLINE_MODEL: 'scripted-model',
  });
  const sessionsDir = path.join(env.HOME, '.cline', 'data', 'sessions');
  let sessionId = null;
  const common = ['--json', '--auto-approve', 'true', '-c', project];
  return {
    configFiles: [...hookFiles, providers, globalSettings],
    get sessionId() { return sessionId; },
    // Detached hooks (TaskStart, UserPromptSubmit, TaskComplete, …) run in
    // their own process group and may still be writing after cline exits.
    settleMs: 1500,
    // Turn 1 `cline --json PROMPT`. Later turns: `cline --id ID` resumes
    // only in the terminal UI (with --json: "JSON output mode requires a
    // prompt argument or piped stdin (interactive mode is unsupported)"), so
    // they go through Cline's ACP mode, `session/load` + `session/prompt`
    // (cline-acp.mjs starts `cline --acp --auto-approve true`). ACP takes
    // its model from the provider's catalog, gpt-4o, and with it gpt's tool
    // set (apply_patch, not editor); `--model` only renames it afterwards.
    // The run-start hook stays TaskStart: cline deletes
    // CLINE_HOOK_AGENT_RESUME unless given `--id`.
    command: (turn) => (turn === 1 || !sessionId ? BIN.cline : process.execPath),
    argv: (turn, prompt) => (turn === 1 || !sessionId
      ? [...common, prompt]
      : [path.join(HERE, 'cline-acp.mjs'), '--cline', BIN.cline, '--cwd', project, '--session', sessionId, '--model', 'scripted-model', prompt]),
    continueArgv: (cont, prompt) => [...cont.slice(1), ...common, prompt],
    parse: (stdout) => {
      const evs = stdout.split('\n').filter((l) => l.trim().startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
      const acp = evs.find((e) => e.type === 'acp_result' || e.type === 'acp_error');
      if (acp) {
        const updates = evs.filter((e) => e.method === 'session/update').map((e) => e.params?.update?.sessionUpdate);
        return {
          session_id: sessionId,
          acp: true,
          stop_reason: acp.stopReason,
          text: evs.filter((e) => e.params?.update?.sessionUpdate === 'agent_message_chunk').map((e) => e.params.update.content?.text || '').join('').slice(0, 200),
          session_updates: [...new Set(updates)],
          errors: evs.filter((e) => e.type === 'acp_error' || e.error).map((e) => JSON.stringify(e).slice(0, 500)),
        };
      }
      // stdout names the task (taskId, conversationId) but not the session:
      // the one session dir of this scratch HOME (the newest, if more).
      if (!sessionId && fs.existsSync(sessionsDir)) {
        const dirs = fs.readdirSync(sessionsDir).map((d) => ({ d, t: fs.statSync(path.join(sessionsDir, d)).mtimeMs })).sort((a, b) => b.t - a.t);
        if (dirs.length) sessionId = dirs[0].d;
      }
      const result = evs.find((e) => e.type === 'run_result');
      return {
        session_id: sessionId,
        task_ids: [...new Set(evs.map((e) => e.taskId).filter(Boolean))],
        finish_reason: result?.finishReason,
        text: typeof result?.text === 'string' ? result.text.slice(0, 200) : undefined,
        event_types: [...new Set(evs.map((e) => (e.type === 'agent_event' ? `agent_event:${e.event?.type}` : e.type)))],
        errors: evs.filter((e) => /error/i.test(JSON.stringify(e.type)) || e.event?.type === 'error').map((e) => JSON.stringify(e).slice(0, 500)),
      };
    },
  };
}

// Whether a hook of this project is still running: a process in `project`
// whose command line holds `hook --agent` (rewind's) or the recorder's
// script (another test's agents, beside this one, are not waited for).
function hooksRunning(project) {
  let real;
  try { real = fs.realpathSync(project); } catch { return false; }
  let pids;
  try { pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)); } catch { return false; }
  return pids.some((pid) => {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (!/ hook --agent /.test(cmd) && !cmd.includes('record-hook.mjs')) return false;
      return fs.readlinkSync(`/proc/${pid}/cwd`) === real;
    } catch { return false; }
  });
}

function shq(s) {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function readJsonText(s) {
  const t = s.trim();
  try { return JSON.parse(t); } catch { /* fallthrough */ }
  const i = t.indexOf('{');
  if (i >= 0) { try { return JSON.parse(t.slice(i)); } catch { /* ignore */ } }
  return null;
}

// ---------------------------------------------------------------------------

function runProcess(cmd, argv, { cwd, env, timeoutS, stdoutFile, stderrFile }) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(cmd, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, timeoutS * 1000);
    child.on('close', async (code, signal) => {
      clearTimeout(timer);
      const t1 = Date.now();
      // Anything the agent left behind in its process group (e.g. a hook still
      // running): give it 3 s, then note it and end it.
      let leftover = false;
      for (let i = 0; i < 30 && groupAlive(child.pid); i++) { leftover = true; await sleep(100); }
      const stillAlive = groupAlive(child.pid);
      if (stillAlive) { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }
      fs.writeFileSync(stdoutFile, stdout);
      fs.writeFileSync(stderrFile, stderr);
      resolve({ code, signal, timedOut, t0, t1, stdout, stderr, leftover, killedLeftover: stillAlive, pid: child.pid });
    });
  });
}

function checkExpect(project, expect) {
  if (!expect) return { ok: true, failures: [] };
  const failures = [];
  for (const [p, content] of Object.entries(expect.files || {})) {
    const f = path.join(project, p);
    if (!fs.existsSync(f)) failures.push(`missing ${p}`);
    else if (content !== null && fs.readFileSync(f, 'utf8') !== content) failures.push(`content of ${p} = ${JSON.stringify(fs.readFileSync(f, 'utf8'))}, want ${JSON.stringify(content)}`);
  }
  for (const p of expect.absent || []) if (fs.existsSync(path.join(project, p))) failures.push(`still present: ${p}`);
  return { ok: failures.length === 0, failures };
}

function readHookLog(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
}

function eventName(rec) {
  return rec.payload?.hook_event_name || rec.payload?.hookEventName || rec.payload?.event || CLINE_HOOK_FILE[rec.payload?.hookName] || rec.payload?.hookName || '?';
}

// Cline: the session is `sessionContext.rootSessionId` (`taskId` is the
// conversation of one run).
function sessionOf(rec) {
  return rec.payload?.session_id ?? rec.payload?.sessionContext?.rootSessionId;
}

function overlaps(recs) {
  // pairs of hook processes whose lifetimes overlapped (t_start..t_end)
  const s = [...recs].sort((a, b) => a.t_start - b.t_start);
  const out = [];
  for (let i = 0; i < s.length; i++) {
    for (let j = i + 1; j < s.length; j++) {
      if (s[j].t_start < s[i].t_end) out.push([eventName(s[i]), eventName(s[j])]);
    }
  }
  return out;
}

function overlapSummary(recs) {
  const pairs = overlaps(recs);
  const same = pairs.filter(([a, b]) => a === b).length;
  const diff = pairs.filter(([a, b]) => a !== b).map(([a, b]) => `${a}~${b}`);
  return { same_event_pairs: same, cross_event_pairs: [...new Set(diff)] };
}

function truncateDeep(v, n = 500) {
  if (typeof v === 'string') return v.length > n ? v.slice(0, n) + `…[truncated ${v.length - n} chars]` : v;
  if (Array.isArray(v)) return v.map((x) => truncateDeep(x, n));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, truncateDeep(x, n)]));
  return v;
}

export async function runAgent(opts) {
  const agent = opts.agent;
  if (!HOOK_EVENTS[agent]) throw new Error(`--agent must be one of ${Object.keys(HOOK_EVENTS).join(', ')}`);
  if (!opts.project || !opts.out) throw new Error('--project and --out are required');
  const out = path.resolve(opts.out);
  const project = path.resolve(opts.project);
  mkdirp(out);
  mkdirp(project);
  const env = baseEnv(out);
  const hookLog = process.env.HOOK_LOG ? path.resolve(process.env.HOOK_LOG) : path.join(out, 'hooks.jsonl');
  env.HOOK_LOG = hookLog;
  if (opts.hookSleepMs) env.HOOK_SLEEP_MS = String(opts.hookSleepMs);
  const hookCmd = opts.hookCmd || `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(HERE, 'record-hook.mjs'))}`;
  const events = opts.events || HOOK_EVENTS[agent];

  const script = opts.script ? loadScript(opts.script) : defaultScenario(opts.turns, opts.parallel);
  const nTurns = Math.min(opts.turns, script.turns.length);
  writeJson(path.join(out, 'script.json'), script);
  const requestLog = path.join(out, 'model-requests.jsonl');
  fs.rmSync(requestLog, { force: true });
  if (opts.dump) fs.rmSync(path.join(out, 'requests'), { recursive: true, force: true });
  const server = await startModelServer({ script, project, agent, logFile: requestLog, dumpDir: opts.dump ? path.join(out, 'requests') : undefined });

  // --no-hooks: the project's hook settings were written by someone else
  // (`rewind install --project`) and are left as they are.
  const hookCmds = opts.noHooks ? [] : hookCommands(hookCmd, opts.hookCopies);
  const preexisting = fs.readdirSync(project).filter((f) => !AGENT_DIRS.includes(f));
  const setup = { claude: setupClaude, codex: setupCodex, gemini: setupGemini, opencode: setupOpenCode, kilo: setupOpenCode, qwen: setupQwen, droid: setupDroid, copilot: setupCopilot, cline: setupCline }[agent]({ agent, project, out, url: server.url, hookCmds, events, env });
  const summary = {
    agent,
    version: null,
    project,
    out,
    model_server: server.url,
    hook_cmd: hookCmd,
    hook_copies: hookCmds.length,
    hook_sleep_ms: opts.hookSleepMs || 0,
    project_preexisting_entries: preexisting,
    hook_log: hookLog,
    config_files: setup.configFiles,
    events_configured: events,
    turns: [],
  };

  const settingsNow = () => Object.fromEntries(setup.configFiles.map((f) => [f, fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : null]));
  const pluginCmds = async (which, cmds) => {
    const done = [];
    for (const [i, argv] of cmds.entries()) {
      const r = await runProcess(BIN[agent], argv, {
        cwd: project, env, timeoutS: 120,
        stdoutFile: path.join(out, `${which}-${i}.stdout`), stderrFile: path.join(out, `${which}-${i}.stderr`),
      });
      done.push({ argv, exit_code: r.code, stdout: r.stdout.trim().slice(-500), stderr: r.stderr.trim().slice(-500) });
    }
    return done;
  };

  try {
    if (opts.installPlugin) {
      if (!setup.plugin) throw new Error(`--install-plugin: no plugin for ${agent}`);
      if (setup.plugin.prepare) summary.plugin_prepare = await pluginCmds('plugin-prepare', setup.plugin.prepare);
      summary.settings_before_install = settingsNow();
      summary.plugin_install = await pluginCmds('plugin-install', setup.plugin.install(opts.installPlugin, opts.pluginOneCommand));
    }
    if (opts.setupCmd) {
      const r = await runProcess('/bin/sh', ['-c', opts.setupCmd], {
        cwd: project, env, timeoutS: 120,
        stdoutFile: path.join(out, 'setup.stdout'), stderrFile: path.join(out, 'setup.stderr'),
      });
      summary.setup = { exit_code: r.code, stdout: r.stdout.trim().slice(-1000), stderr: r.stderr.trim().slice(-1000) };
      if (r.code !== 0) throw new Error(`--setup-cmd failed (${r.code}): ${r.stderr}`);
    }
    const v = await runProcess(BIN[agent], ['--version'], { cwd: project, env, timeoutS: 60, stdoutFile: path.join(out, 'version.stdout'), stderrFile: path.join(out, 'version.stderr') });
    summary.version = v.stdout.trim().split('\n').pop();

    const firstTurn = opts.continueArgv ? (opts.firstTurn || nTurns) : 1;
    for (let turn = firstTurn; turn <= nTurns; turn++) {
      const spec = script.turns[turn - 1];
      // `command`: the turn is a slash command, the marker its argument.
      const prompt = `${spec.command ? `${spec.command} ` : ''}[[rewind-turn:${turn}]] ${spec.prompt || `Scripted turn ${turn}.`}`;
      const hooksBefore = readHookLog(hookLog).length;
      const reqBefore = server.events.length;
      const argv = opts.continueArgv && turn === firstTurn ? setup.continueArgv(opts.continueArgv, prompt) : setup.argv(turn, prompt);
      const cmd = (!(opts.continueArgv && turn === firstTurn) && setup.command?.(turn)) || BIN[agent];
      const r = await runProcess(cmd, argv, {
        cwd: project, env, timeoutS: opts.timeout,
        stdoutFile: path.join(out, `turn-${turn}.stdout`), stderrFile: path.join(out, `turn-${turn}.stderr`),
      });
      // Hooks the agent runs detached (outside its process group): wait
      // until the log has been quiet for a while and no hook process is
      // left (rewind's hooks write no log here: a turn's detached end must
      // be recorded before the next turn's start).
      if (setup.settleMs) {
        let n = readHookLog(hookLog).length;
        for (let quiet = 0; quiet < setup.settleMs || (hooksRunning(project) && quiet < 30000); quiet += 100) {
          await sleep(100);
          const m = readHookLog(hookLog).length;
          if (m !== n) { n = m; quiet = 0; }
        }
      }
      const parsed = (() => { try { return setup.parse(r.stdout); } catch (e) { return { parse_error: String(e) }; } })();
      if (opts.saveTurns) {
        const dest = path.join(path.resolve(opts.saveTurns), `turn-${turn}`);
        fs.rmSync(dest, { recursive: true, force: true });
        fs.cpSync(project, dest, {
          recursive: true,
          verbatimSymlinks: true,
          filter: (src) => !AGENT_DIRS.includes(path.relative(project, src).split(path.sep)[0]),
        });
      }
      const hookRecs = readHookLog(hookLog).slice(hooksBefore);
      const reqs = server.events.slice(reqBefore);
      const emitted = reqs.filter((q) => q.calls).flatMap((q) => q.calls.map((c) => ({ step: q.step, name: c.name, input: truncateDeep(c.input, 120) })));
      const lastMain = [...reqs].reverse().find((q) => q.turn === turn && !q.aux);
      const hookCounts = {};
      for (const h of hookRecs) hookCounts[eventName(h)] = (hookCounts[eventName(h)] || 0) + 1;
      const toolName = (h) => h.payload?.tool_name ?? h.payload?.preToolUse?.toolName;
      const toolHooks = hookRecs.filter((h) => /Pre|Before/.test(eventName(h)) && toolName(h));
      summary.turns.push({
        turn,
        argv: argv.map((a) => (a === prompt ? '<prompt>' : a)),
        prompt,
        exit_code: r.code,
        signal: r.signal,
        timed_out: r.timedOut,
        duration_s: Number(((r.t1 - r.t0) / 1000).toFixed(2)),
        session_id: parsed.session_id ?? setup.sessionId ?? null,
        agent_output: parsed,
        model_requests: reqs.map((q) => `${q.kind}${q.aux ? `(${q.aux})` : ''}${q.calls ? `[${q.calls.map((c) => c.name).join(',')}]` : ''}${q.final ? '[final]' : ''}`),
        tool_calls_emitted: emitted,
        tool_results_seen: lastMain?.results?.length ?? 0,
        tool_results: lastMain?.results ?? [],
        finished_script: !!lastMain?.final,
        hook_events: hookCounts,
        hook_tool_names: toolHooks.map(toolName),
        hook_session_ids: [...new Set(hookRecs.map(sessionOf).filter(Boolean))],
        hook_overlaps: overlapSummary(hookRecs),
        hooks_after_exit: hookRecs.filter((h) => h.t_start > r.t1).map(eventName),
        leftover_processes_after_exit: r.leftover,
        expect: checkExpect(project, spec.expect),
        stderr_tail: r.stderr.trim().split('\n').slice(-5).join('\n').slice(-800),
      });
    }
    if (opts.uninstallPlugin) {
      summary.plugin_uninstall = await pluginCmds('plugin-uninstall', setup.plugin.uninstall());
      summary.settings_after_uninstall = settingsNow();
    }
  } finally {
    await server.close();
  }

  const allHooks = readHookLog(hookLog);
  summary.hook_events_total = {};
  for (const h of allHooks) summary.hook_events_total[eventName(h)] = (summary.hook_events_total[eventName(h)] || 0) + 1;
  summary.events_never_fired = events.filter((e) => !summary.hook_events_total[e]);
  summary.session_ids_seen = [...new Set(allHooks.map(sessionOf).filter(Boolean))];
  // What the agent adds to / strips from the environment it gives hooks.
  const agentEnv = new Set(Object.keys(env));
  const added = new Set();
  const removed = new Set();
  for (const h of allHooks) {
    const names = new Set(h.env_names || []);
    for (const n of names) if (!agentEnv.has(n)) added.add(n);
    for (const n of agentEnv) if (!names.has(n)) removed.add(n);
  }
  summary.hook_env_added = [...added].sort();
  summary.hook_env_removed = [...removed].sort();
  summary.hook_env_values = Object.assign({}, ...allHooks.slice(0, 1).map((h) => h.env_selected));
  summary.hook_cwds = [...new Set(allHooks.map((h) => h.cwd))];
  const pluginOk = [...(summary.plugin_prepare || []), ...(summary.plugin_install || []), ...(summary.plugin_uninstall || [])].every((r) => r.exit_code === 0);
  summary.ok = pluginOk && summary.turns.length === nTurns - (opts.continueArgv ? (opts.firstTurn || nTurns) - 1 : 0) && summary.turns.every((t) => t.exit_code === 0 && t.expect.ok && t.finished_script);
  if (opts.samples) {
    mkdirp(path.dirname(path.resolve(opts.samples)));
    // Samples are meant to be committed: strings cut to 500 chars, and the
    // environment reduced to the names the agent itself added for the hook
    // (the rest is whatever the machine running the harness had).
    const sample = allHooks.map(({ env_names: names, ...h }) => ({ ...h, env_added_by_agent: (names || []).filter((n) => !agentEnv.has(n)) }));
    fs.writeFileSync(opts.samples, sample.map((h) => JSON.stringify(truncateDeep(h, 500))).join('\n') + (sample.length ? '\n' : ''));
  }
  writeJson(path.join(out, 'summary.json'), summary);
  return summary;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(String(e.message));
    process.exit(2);
  }
  if (opts.help || !opts.agent || !opts.project || !opts.out) {
    console.error('usage: node run-agent.mjs --agent claude|codex|gemini --project DIR --out DIR [--hook-cmd CMD] [--turns N] [--timeout S] [--script FILE] [--no-parallel] [--hook-sleep-ms N] [--samples FILE] [--dump] [--events E1,E2] [--hook-copies N] [--save-turns DIR] [--no-hooks] [--install-plugin SRC | --install-plugin-at SRC] [--uninstall-plugin] [--setup-cmd CMD] [--continue JSON [--first-turn N]]');
    process.exit(2);
  }
  const summary = await runAgent(opts);
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  process.exit(summary.ok ? 0 : 1);
}
