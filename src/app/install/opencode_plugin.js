// rewind: a checkpoint at every prompt, tool call and turn end of this agent.
// Written by `rewind install __REWIND_AGENT__`; `rewind uninstall __REWIND_AGENT__` removes this file.
// It hands each event, as JSON on stdin, to `rewind hook --agent __REWIND_AGENT__`, which
// records it (docs/agents.md). No imports, not even the plugin package:
// OpenCode npm-installs that at every start for a plugin that names it.
const REWIND = __REWIND_ARGV__;

export const RewindPlugin = async ({ directory, worktree }) => {
  // tool.execute.after does not carry the tool's arguments: kept from before.
  const args = new Map();
  // A subagent runs in a child session: its events belong to its root's turn.
  const parents = new Map();
  const root = (id) => {
    for (let i = 0; id && parents.has(id) && i < 64; i++) id = parents.get(id);
    return id;
  };
  const payload = (name, fields) =>
    new TextEncoder().encode(JSON.stringify({ hook_event_name: name, directory, worktree, ...fields }));
  const options = (stdin) => ({ cmd: REWIND, cwd: directory, stdin, stdout: 'ignore', stderr: 'ignore' });
  // Awaited hooks (chat.message, tool.execute.*): the agent waits for this.
  const send = async (name, fields) => {
    try {
      await Bun.spawn(options(payload(name, fields))).exited;
    } catch {
      // A hook never breaks the agent.
    }
  };
  // Bus events are not awaited, and `opencode run` exits right after
  // session.idle: record it before returning.
  const sendNow = (name, fields) => {
    try {
      Bun.spawnSync(options(payload(name, fields)));
    } catch {
      // A hook never breaks the agent.
    }
  };
  return {
    'chat.message': async (input, output) => {
      if (parents.has(input.sessionID)) return;
      await send('chat.message', { input, output: { parts: output.parts } });
    },
    'tool.execute.before': async (input, output) => {
      args.set(input.callID, output.args);
      await send('tool.execute.before', { input: { ...input, sessionID: root(input.sessionID) }, output: { args: output.args } });
    },
    'tool.execute.after': async (input, output) => {
      const used = input.args ?? args.get(input.callID);
      args.delete(input.callID);
      await send('tool.execute.after', { input: { ...input, sessionID: root(input.sessionID), args: used }, output: { title: output?.title } });
    },
    event: async ({ event }) => {
      if (event.type === 'session.created') {
        const info = event.properties?.info;
        if (info?.parentID) {
          parents.set(info.id, info.parentID);
          return;
        }
        sendNow(event.type, { event });
      } else if (event.type === 'session.idle') {
        if (parents.has(event.properties?.sessionID)) return;
        sendNow(event.type, { event });
      }
    },
  };
};
