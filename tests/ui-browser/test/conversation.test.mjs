// The restore dialog's three choices (issue 37): "files", "files and
// conversation", "conversation only". Two Claude Code turns go through
// `rewind hook` with the transcript written as Claude Code writes it (its
// messages after the prompt's hook); the page then restores the start of
// turn 2 with the conversation, and the conversation alone. Its own
// project, store and server, beside the other files'.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openUi, closeUi, listCheckpoints } from '../lib/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const bin = process.env.REWIND_BIN || path.join(repo, 'target/debug/rewind');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rewind-ui-conv-'));
const project = path.join(tmp, 'project');
const transcripts = path.join(tmp, 'transcripts');
// One-shot hooks (no hook server left behind); the same store for the page.
const env = { ...process.env, REWIND_HOME: path.join(tmp, 'home'), REWIND_SERVER: '0', RUST_LOG: 'warn' };
delete env.CLAUDE_PROJECT_DIR;
const sid = '0b7c2a55-4f6e-4a43-9c1e-6d1f0e3b2a10';
const transcript = path.join(transcripts, `${sid}.jsonl`);

let ui;
let server;
let url;
let page;

const line = (kind, uuid, text) => `${JSON.stringify({ type: kind, uuid, sessionId: sid, message: { content: text } })}\n`;
const append = (text) => fs.appendFileSync(transcript, text);

function hook(event, extra = {}) {
  const payload = { session_id: sid, transcript_path: transcript, cwd: project, hook_event_name: event, ...extra };
  execFileSync(bin, ['hook', '--agent', 'claude-code'], { env, cwd: project, input: JSON.stringify(payload), stdio: ['pipe', 'pipe', 'pipe'] });
}

const checkpoints = () => listCheckpoints(ui);

before(async () => {
  fs.mkdirSync(project, { recursive: true });
  fs.mkdirSync(transcripts, { recursive: true });
  const write = { tool_name: 'Write', tool_input: { file_path: path.join(project, 'a.txt') } };
  hook('SessionStart', { source: 'startup' });
  hook('UserPromptSubmit', { prompt: 'one' });
  append(line('user', 'u1', 'one'));
  append(line('assistant', 'a1', 'writing'));
  fs.writeFileSync(path.join(project, 'a.txt'), '1');
  hook('PostToolUse', write);
  append(line('assistant', 'a2', 'done one'));
  hook('Stop');
  append(`${JSON.stringify({ type: 'queue-operation', sessionId: sid })}\n`);
  hook('UserPromptSubmit', { prompt: 'two' });
  append(line('user', 'u2', 'two'));
  fs.writeFileSync(path.join(project, 'a.txt'), '2');
  hook('PostToolUse', write);
  append(line('assistant', 'a3', 'done two'));
  hook('Stop');

  ui = await openUi(bin, ['--cwd', project], env, { profile: 'rewind-ui-conv-chromium-', viewport: { width: 1400, height: 860 } });
  ({ server, url, page } = ui);
});

after(() => closeUi(ui, tmp));

// The checkpoint turn 2's prompt took: the conversation is cut before it.
async function turnTwo() {
  const all = await checkpoints();
  const c = all.find((x) => x.kind === 'message' && x.turnIndex === 2);
  assert.ok(c, `turn 2 has its prompt checkpoint: ${JSON.stringify(all.map((x) => [x.kind, x.turnIndex]))}`);
  return c.entryId;
}

// Opens the restore plan of `id`, picks `choice` and waits for its plan.
async function planWith(id, choice) {
  await page.locator(`#timeline li.cp[data-id="${id}"] .label`).click();
  await page.locator('#cp-restore').click();
  await page.waitForSelector('#plan-dialog:not([hidden]) #plan-conversation');
  const options = await page.locator('#plan-conversation option').allInnerTexts();
  assert.deepEqual(options, ['files', 'files and conversation', 'conversation only']);
  await page.locator('#plan-conversation').selectOption(choice);
}

// What the page's long toast names as the new session (`claude --resume ID`).
async function resumedSession() {
  await page.waitForFunction(() => /Continue the conversation/.test(document.querySelector('#toast').textContent));
  const text = await page.locator('#toast').innerText();
  const m = text.match(/claude --resume ([0-9a-f-]{36})/);
  assert.ok(m, `the command to continue: ${text}`);
  assert.match(text, new RegExp(`in ${project.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  return m[1];
}

test('"files and conversation" puts the files back and forks the conversation before the checkpoint', async () => {
  const original = fs.readFileSync(transcript);
  await planWith(await turnTwo(), 'both');
  await page.waitForFunction(() => /conversation is forked/.test(document.querySelector('#plan-notes').textContent));
  assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), '2', 'the plan writes nothing');
  await page.evaluate(() => { document.querySelector('#toast').textContent = ''; });
  await page.locator('#plan-confirm').click();
  const fork = await resumedSession();
  assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), '1');
  assert.deepEqual(fs.readFileSync(transcript), original, 'the original transcript is unchanged');
  // Turn 1 whole, nothing of turn 2, under the new id.
  const want = [line('user', 'u1', 'one'), line('assistant', 'a1', 'writing'), line('assistant', 'a2', 'done one')]
    .join('').replaceAll(sid, fork);
  assert.equal(fs.readFileSync(path.join(transcripts, `${fork}.jsonl`), 'utf8'), want);
});

test('"conversation only" writes no file and forks the conversation again', async () => {
  fs.writeFileSync(path.join(project, 'a.txt'), 'mine');
  const before = fs.readdirSync(transcripts).sort();
  await planWith(await turnTwo(), 'only');
  await page.waitForFunction(() => /No file is written/.test(document.querySelector('#plan-summary').textContent));
  await page.evaluate(() => { document.querySelector('#toast').textContent = ''; });
  await page.locator('#plan-confirm').click();
  const fork = await resumedSession();
  assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), 'mine', 'no file written');
  const after = fs.readdirSync(transcripts).sort();
  assert.deepEqual(after, [...before, `${fork}.jsonl`].sort());
});
