// A person's side of checkpoints in the page (issue 38): "Create checkpoint"
// in the toolbar with a name and a note, the label form on an automatic
// checkpoint (editing its note keeps its label), the paused badge after
// `rewind pause`, and the files the latest checkpoint left out. Its own
// project, store and server, beside ui.test.mjs's.
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

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rewind-ui-cp-'));
const project = path.join(tmp, 'project');
const store = path.join(tmp, 'store');
const env = { ...process.env, REWIND_HOME: path.join(tmp, 'home'), RUST_LOG: 'warn' };
const at = ['--cwd', project, '--store', store];

let ui;
let server;
let url;
let page;

function cli(...args) {
  return execFileSync(bin, [...args, ...at], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const checkpoints = () => listCheckpoints(ui);

before(async () => {
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(path.join(project, 'src/app.py'), 'print("hi")\n');
  // Over the 16 MiB size cap: left out of every checkpoint.
  fs.writeFileSync(path.join(project, 'big.bin'), Buffer.alloc(17 * 1024 * 1024, 1));
  const script = path.join(tmp, 'edit.mjs');
  fs.writeFileSync(script, "import fs from 'node:fs';\nfs.writeFileSync('src/app.py', 'print(\"hello\")\\n');\n");
  // One automatic turn: a prompt-like checkpoint and a turn checkpoint.
  execFileSync(bin, ['run', ...at, '--', process.execPath, script], { env, stdio: 'pipe' });

  ui = await openUi(bin, [...at], env, { profile: 'rewind-ui-cp-chromium-', viewport: { width: 1400, height: 860 } });
  ({ server, url, page } = ui);
});

after(() => closeUi(ui, tmp));

test('"Create checkpoint" records one with its name and note, and says what it captured', async () => {
  const before = await checkpoints();
  await page.locator('#checkpoint-btn').click();
  await page.waitForSelector('#checkpoint-dialog:not([hidden])');
  await page.fill('#checkpoint-name', 'before the refactor');
  await page.fill('#checkpoint-note', 'tests pass here');
  await page.locator('#checkpoint-create').click();
  await page.waitForSelector('#checkpoint-dialog[hidden]', { state: 'attached' });
  await page.waitForFunction(() => /Checkpoint \w+ \(manual 1 of 50\): captured 1 file\(s\)/.test(document.querySelector('#toast').textContent));
  const toast = await page.locator('#toast').innerText();
  assert.match(toast, /Left out: big\.bin \(tooLarge\)/);
  const after = await checkpoints();
  assert.equal(after.length, before.length + 1);
  const made = after[after.length - 1];
  assert.equal(made.kind, 'manual');
  assert.equal(made.label, 'before the refactor');
  assert.equal(made.note, 'tests pass here');
  // No turn number of its own: the turn of the checkpoint above it.
  assert.equal(made.turnIndex, before[before.length - 1].turnIndex);
  await page.waitForSelector(`#timeline li.cp[data-id="${made.entryId}"]`);
  assert.match(await page.locator(`#timeline li.cp[data-id="${made.entryId}"]`).innerText(), /before the refactor/);
});

// Confirms the open label plan and waits for this save's toast. The toast
// is emptied first: the one a save before left says "Saved." too, and
// waiting on it raced the request (seen in CI).
async function confirmSave() {
  await page.evaluate(() => { document.querySelector('#toast').textContent = ''; });
  await page.locator('#plan-confirm').click();
  await page.waitForFunction(() => /Saved/.test(document.querySelector('#toast').textContent));
}

test('editing the note of an automatic checkpoint keeps its label', async () => {
  const turn = (await checkpoints()).find((c) => c.kind === 'turn');
  // A label someone set on it before (the page, `rewind label`, a host).
  cli('label', turn.entryId, 'keep me');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  await page.locator(`#timeline li.cp[data-id="${turn.entryId}"] .label`).click();
  // The form opens with the current label and note.
  assert.equal(await page.inputValue('#label-input'), 'keep me');
  assert.equal(await page.inputValue('#note-input'), '');
  await page.fill('#note-input', 'checked by hand');
  await page.locator('#label-form button[type=submit]').click();
  await page.waitForSelector('#plan-dialog:not([hidden])');
  assert.match(await page.locator('#plan-summary').innerText(), /set the note to "checked by hand"\. The label stays as it is\./);
  await confirmSave();
  const now = (await checkpoints()).find((c) => c.entryId === turn.entryId);
  assert.equal(now.label, 'keep me', 'the label survives a note edit');
  assert.equal(now.note, 'checked by hand');
  // And the label edited alone keeps the note.
  await page.locator(`#timeline li.cp[data-id="${turn.entryId}"] .label`).click();
  assert.equal(await page.inputValue('#note-input'), 'checked by hand');
  await page.fill('#label-input', 'renamed');
  await page.locator('#label-form button[type=submit]').click();
  await page.waitForSelector('#plan-dialog:not([hidden])');
  await confirmSave();
  const again = (await checkpoints()).find((c) => c.entryId === turn.entryId);
  assert.equal(again.label, 'renamed');
  assert.equal(again.note, 'checked by hand', 'the note survives a label edit');
});

test('a restore plan shows the label and note of its checkpoint', async () => {
  const turn = (await checkpoints()).find((c) => c.kind === 'turn');
  await page.locator(`#timeline li.cp[data-id="${turn.entryId}"] .label`).click();
  await page.locator('#cp-restore').click();
  await page.waitForSelector('#plan-dialog:not([hidden])');
  const target = await page.locator('#plan-target').innerText();
  assert.match(target, /renamed — checked by hand/);
  await page.locator('#plan-cancel').click();
});

test('the page says when automatic checkpoints are paused, and what is not protected', async () => {
  assert.equal(await page.locator('#paused-badge').isHidden(), true);
  cli('pause');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  await page.waitForSelector('#paused-badge:not([hidden])');
  assert.match(await page.locator('#paused-badge').innerText(), /paused since \d{4}-\d\d-\d\dT/);
  const list = await page.locator('#unprotected-list').innerText();
  assert.match(list, /big\.bin \(tooLarge\): over the size cap/);
  // Paused or not, a person's checkpoint is recorded.
  await page.locator('#checkpoint-btn').click();
  await page.fill('#checkpoint-name', 'while paused');
  await page.locator('#checkpoint-create').click();
  await page.waitForFunction(() => /manual 2 of 50/.test(document.querySelector('#toast').textContent));
  cli('resume');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  assert.equal(await page.locator('#paused-badge').isHidden(), true);
});
