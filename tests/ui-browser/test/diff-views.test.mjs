// rewind ui at 1024x768 in the system's headless Chromium: the diff view's
// copy controls (the whole comparison and one hunk copied as patches, each
// applied with the real `git apply` to a copy of the older state), a
// notebook diffed by cell, the one-click restore on a timeline row (the same
// plan and confirmation as the card's, git's words in its dialog), no
// horizontal overflow or clipped button at 1024 px, and the favicon served
// from the binary. A session of its own, recorded with `rewind run`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { openUi, closeUi, listCheckpoints } from '../lib/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const bin = process.env.REWIND_BIN || path.join(repo, 'target/debug/rewind');
const shots = path.join(repo, 'target/ui-screenshots');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rewind-ui-views-'));
const project = path.join(tmp, 'project');
const store = path.join(tmp, 'store');
const home = path.join(tmp, 'home');

function notebook(cells) {
  return `${JSON.stringify({
    nbformat: 4, nbformat_minor: 5,
    metadata: { kernelspec: { language: 'python', name: 'python3', display_name: 'Python 3' } },
    cells,
  }, null, 1)}\n`;
}

const NB_BASE = notebook([
  { cell_type: 'markdown', metadata: {}, source: ['# Analysis\n'] },
  { cell_type: 'code', metadata: {}, execution_count: 1, source: ['def total(xs):\n', '    return sum(xs)'], outputs: [] },
  { cell_type: 'code', metadata: {}, execution_count: 2, source: ['print(total([1, 2]))'],
    outputs: [{ output_type: 'stream', name: 'stdout', text: ['3\n'] }] },
]);
const NB_TURN1 = notebook([
  { cell_type: 'markdown', metadata: {}, source: ['# Analysis\n'] },
  { cell_type: 'code', metadata: {}, execution_count: 1, source: ['def total(xs):\n', '    return sum(x * 2 for x in xs)'], outputs: [] },
  { cell_type: 'code', metadata: {}, execution_count: 2, source: ['print(total([1, 2]))'],
    outputs: [{ output_type: 'stream', name: 'stdout', text: ['6\n'] },
      { output_type: 'display_data', metadata: {}, data: { 'image/png': 'iVBORw0KGgo=', 'text/plain': ['<Figure>'] } }] },
]);

const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
const BASE = {
  'src/main.py': 'import sys\n\nprint("hello")\n',
  'long.txt': `${lines.join('\n')}\n`,
  'no-eol.txt': 'first\nlast without a newline',
  'gone.txt': 'deleted by turn 1\n',
  'dir with space/é.txt': 'unicode and a space\n',
  'analysis.ipynb': NB_BASE,
};
const TURN1 = {
  ...BASE,
  'src/main.py': 'import sys\n\nprint("hello, world")\n',
  'long.txt': `${lines.map((l, i) => (i === 1 ? 'line 2, edited' : i === 27 ? 'line 28, edited' : l)).join('\n')}\n`,
  'no-eol.txt': 'first\nlast, still without one',
  'dir with space/é.txt': 'unicode and a space, edited\n',
  'added.txt': 'added by turn 1\n',
  'analysis.ipynb': NB_TURN1,
};
delete TURN1['gone.txt'];

function writeFiles(dir, files) {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
}

function diskState(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { if (e.name !== '.git') walk(p); } else out[path.relative(dir, p)] = fs.readFileSync(p);
    }
  };
  walk(dir);
  return out;
}

function sameState(actual, expected, what) {
  assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${what}: the same files`);
  for (const [rel, bytes] of Object.entries(expected)) {
    assert.ok(Buffer.compare(actual[rel], Buffer.from(bytes)) === 0, `${what}: ${rel} byte for byte`);
  }
}

const env = { ...process.env, REWIND_HOME: home, RUST_LOG: 'warn' };
const gitEnv = { ...env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

function git(args, cwd = project) {
  return execFileSync('git', args, { cwd, env: gitEnv, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

// `git apply` of `patch` in `dir` (outside any repository).
function gitApply(dir, patch) {
  const file = path.join(tmp, `p-${Math.random().toString(16).slice(2)}.patch`);
  fs.writeFileSync(file, patch);
  execFileSync('git', ['apply', '--verbose', file], { cwd: dir, env: { ...gitEnv, GIT_CEILING_DIRECTORIES: tmp }, stdio: 'pipe' });
}

function turn(label, script) {
  const file = path.join(tmp, `${label}.mjs`);
  fs.writeFileSync(file, script);
  execFileSync(bin, ['run', '--cwd', project, '--store', store, '--', process.execPath, file], { env, stdio: 'pipe' });
}

let ui;
let url;
let origin;
let secret;
let context;
let page;
const outside = [];

function request(method, urlPath, headers = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(urlPath, origin);
    const req = http.request({ method, host: '127.0.0.1', port: u.port, path: u.pathname + u.search, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const checkpoints = () => listCheckpoints(ui);

async function clipboard() {
  return page.evaluate(() => navigator.clipboard.readText());
}

async function shot(name) {
  fs.mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: false });
}

before(async () => {
  fs.mkdirSync(project, { recursive: true });
  writeFiles(project, BASE);
  // A git repository with a commit, so checkpoints record git's state and a
  // plan can say what git did since.
  git(['init', '-q', '-b', 'main']);
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'start']);
  const script = `import fs from 'node:fs';\nimport path from 'node:path';\n${
    Object.entries(TURN1).filter(([rel, c]) => BASE[rel] !== c).map(([rel, c]) =>
      `fs.mkdirSync(path.dirname(${JSON.stringify(rel)}), { recursive: true }); fs.writeFileSync(${JSON.stringify(rel)}, ${JSON.stringify(c)});`).join('\n')
  }\nfs.rmSync('gone.txt');\n`;
  turn('turn1', script);
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'after turn one']);

  ui = await openUi(bin, ['--cwd', project, '--store', store], env, {
    profile: 'rewind-ui-chromium-',
    viewport: { width: 1024, height: 768 },
    prepare: async (u) => {
      await u.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: u.origin });
      u.page.on('request', (r) => { if (!r.url().startsWith(u.origin)) outside.push(r.url()); });
    },
  });
  ({ url, origin, secret, context, page } = ui);
});

after(() => closeUi(ui, tmp));

// A = the baseline, B = turn 1's end.
async function compareBaseToTurn1() {
  const cps = await checkpoints();
  const base = cps.find((c) => c.kind === 'baseline');
  const turn1 = cps.filter((c) => c.kind === 'turn').at(-1);
  await page.locator(`#timeline li.cp[data-id="${base.entryId}"] .pick button`, { hasText: 'A' }).click();
  await page.locator(`#timeline li.cp[data-id="${turn1.entryId}"] .pick button`, { hasText: 'B' }).click();
  await page.waitForFunction((id) => document.querySelector('#point-b').textContent.includes(id.slice(0, 8)), turn1.entryId);
  await page.waitForSelector('#files li[data-path="added.txt"]');
  return { base, turn1 };
}

test('"Copy all as patch" gives a patch git apply turns the older state into the newer, byte for byte', async () => {
  await compareBaseToTurn1();
  await page.locator('#files li[data-path="long.txt"]').click();
  await page.waitForSelector('#copy-all-patch');
  await page.locator('#copy-all-patch').click();
  await page.waitForFunction(() => /^Copied the patch/.test(document.querySelector('#toast').textContent));
  const patch = await clipboard();
  assert.match(patch, /^diff --git /);
  assert.match(patch, /deleted file mode 100644\n--- a\/gone\.txt\n\+\+\+ \/dev\/null\n/);
  assert.match(patch, /\\ No newline at end of file/);
  const older = path.join(tmp, 'older-all');
  writeFiles(older, BASE);
  gitApply(older, patch);
  sameState(diskState(older), TURN1, 'the older state with the copied patch applied');
});

test('a hunk copies as a patch of its own, and as its new text', async () => {
  await compareBaseToTurn1();
  await page.locator('#files li[data-path="long.txt"]').click();
  await page.waitForSelector('table.diff tr.hunk[data-hunk="1"] .copy-hunk');
  await shot('diff-copy-controls-1024');
  await page.locator('table.diff tr.hunk[data-hunk="1"] .copy-hunk').click();
  await page.waitForFunction(() => /^Copied hunk 2/.test(document.querySelector('#toast').textContent));
  const hunk = await clipboard();
  assert.match(hunk, /^diff --git a\/long\.txt b\/long\.txt\n--- a\/long\.txt\n\+\+\+ b\/long\.txt\n@@ /);
  assert.ok(!hunk.includes('line 2, edited'), 'only the second hunk');
  const older = path.join(tmp, 'older-hunk');
  writeFiles(older, { 'long.txt': BASE['long.txt'] });
  gitApply(older, hunk);
  const want = lines.map((l, i) => (i === 27 ? 'line 28, edited' : l));
  assert.equal(fs.readFileSync(path.join(older, 'long.txt'), 'utf8'), `${want.join('\n')}\n`);

  await page.locator('table.diff tr.hunk[data-hunk="1"] .copy-new').click();
  await page.waitForFunction(() => /^Copied the new text of hunk 2/.test(document.querySelector('#toast').textContent));
  const text = await clipboard();
  assert.ok(!/^[+-]/m.test(text), 'no diff signs');
  assert.equal(text, `${want.slice(24, 30).join('\n')}\n`);
});

test('a notebook is shown by cell: its source highlighted, its outputs in words', async () => {
  await compareBaseToTurn1();
  await page.locator('#files li[data-path="analysis.ipynb"]').click();
  await page.waitForSelector('.notebook .nb-cell.st-modified');
  assert.match(await page.locator('.notebook .nb-head').innerText(), /Notebook \(python\): 2 of 3 cell\(s\) changed/);
  const modified = page.locator('.nb-cell.st-modified');
  assert.match(await modified.innerText(), /return sum\(x \* 2 for x in xs\)/);
  assert.ok(await modified.locator('.hljs-keyword').count() > 0, 'Python is highlighted');
  assert.match(await page.locator('.nb-cell.out-changed .nb-out').innerText(), /^2 outputs: stream, image\/png \(changed\)$/);
  assert.equal(await page.locator('.nb-cell.st-unchanged').count(), 2, 'the other cells, unchanged');
  await shot('notebook-cells-1024');
  // The raw JSON's diff is one click away.
  await page.locator('#notebook-raw').click();
  await page.waitForSelector('table.diff.unified');
  assert.equal(await page.locator('.notebook').count(), 0);
  assert.match(await page.locator('#diff').innerText(), /image\/png/);
  await page.locator('#notebook-raw').click();
  await page.waitForSelector('.notebook');
});

test('at 1024 px wide nothing overflows sideways and no button is clipped', async () => {
  const check = () => page.evaluate(() => {
    const doc = document.documentElement;
    const problems = [];
    if (doc.scrollWidth > doc.clientWidth) problems.push(`the page scrolls sideways: ${doc.scrollWidth} > ${doc.clientWidth}`);
    for (const b of document.querySelectorAll('button')) {
      if (!b.offsetParent) continue;
      const r = b.getBoundingClientRect();
      if (r.bottom < 0 || r.top > window.innerHeight || r.width === 0) continue;
      const name = `${b.id || b.className || ''} "${b.textContent.trim()}"`;
      if (r.left < 0 || r.right > doc.clientWidth + 0.5) problems.push(`${name} outside the window: ${r.left}-${r.right}`);
      if (b.scrollWidth > b.clientWidth + 1) problems.push(`${name} cuts its own text`);
      for (let a = b.parentElement; a && a !== document.body; a = a.parentElement) {
        const style = getComputedStyle(a);
        if (style.overflowX === 'visible') continue;
        const ar = a.getBoundingClientRect();
        if (r.left < ar.left - 0.5 || r.right > ar.right + 0.5) { problems.push(`${name} clipped by ${a.id || a.tagName}`); break; }
      }
    }
    return problems;
  });
  assert.deepEqual(await page.evaluate(() => [window.innerWidth, window.innerHeight]), [1024, 768]);
  await compareBaseToTurn1();
  const cps = await checkpoints();
  // A checkpoint's card, a text diff, side by side, a notebook.
  await page.locator(`#timeline li.cp[data-id="${cps.at(-1).entryId}"] .label`).click();
  await page.waitForSelector('#checkpoint:not([hidden])');
  await page.locator('#files li[data-path="long.txt"]').click();
  await page.waitForSelector('table.diff tr.hunk .copy-hunk');
  assert.deepEqual(await check(), [], 'the diff view');
  await page.locator('#split-toggle').check();
  await page.waitForSelector('table.diff.split tr.hunk .copy-hunk');
  assert.deepEqual(await check(), [], 'side by side');
  await page.locator('#split-toggle').uncheck();
  await page.locator('#files li[data-path="analysis.ipynb"]').click();
  await page.waitForSelector('.notebook');
  assert.deepEqual(await check(), [], 'a notebook');
  await shot('page-1024');
});

test('a timeline row restores in one click through the same plan, with git in words', async () => {
  const { base } = await compareBaseToTurn1();
  const before = diskState(project);
  sameState(before, TURN1, 'before the restore');
  await page.locator(`#timeline li.cp[data-id="${base.entryId}"] .row-restore`).click();
  await page.waitForSelector('#plan-dialog:not([hidden])');
  assert.match(await page.locator('#plan-title').innerText(), /Restore all files to turn 0/);
  const plan = await page.locator('#plan-files tbody').innerText();
  assert.match(plan, /write\s+gone\.txt/);
  assert.match(plan, /delete\s+added\.txt/);
  // What git did since the checkpoint, in words (the CLI's), not hashes.
  const gitNotes = await page.locator('#plan-notes li.git').allInnerTexts();
  assert.ok(gitNotes.some((n) => /^git: 1 commit since this checkpoint: 'after turn one'/.test(n)), `git's words: ${gitNotes}`);
  assert.ok(!gitNotes.some((n) => /\b[0-9a-f]{7,40}\b/.test(n)), `no hashes: ${gitNotes}`);
  sameState(diskState(project), before, 'after the plan');
  await shot('row-restore-plan-1024');
  await page.locator('#plan-confirm').click();
  await page.waitForSelector('#plan-dialog[hidden]', { state: 'attached' });
  await page.waitForFunction(() => /Done: wrote/.test(document.querySelector('#toast').textContent));
  sameState(diskState(project), BASE, 'after the row\'s restore');
  // Undo puts turn 1's state back.
  await page.locator('#undo-btn').click();
  await page.waitForSelector('#plan-dialog:not([hidden])');
  await page.locator('#plan-confirm').click();
  await page.waitForSelector('#plan-dialog[hidden]', { state: 'attached' });
  await page.waitForFunction(() => /Done: wrote/.test(document.querySelector('#toast').textContent));
  sameState(diskState(project), TURN1, 'after the undo');
});

test('the favicon is served from the binary, and nothing from outside', async () => {
  const href = await page.locator('link[rel="icon"]').getAttribute('href');
  assert.equal(href, '/assets/favicon.svg');
  for (const p of [href, '/favicon.ico']) {
    const r = await request('GET', p, { 'x-rewind-token': secret });
    assert.equal(r.status, 200, p);
    assert.equal(r.headers['content-type'], 'image/svg+xml', p);
    assert.match(r.body.toString(), /^<svg /, p);
  }
  const loaded = await page.evaluate(async () => (await fetch('/assets/favicon.svg')).status);
  assert.equal(loaded, 200, 'the page\'s own cookie is enough');
  assert.deepEqual(outside, [], 'the page loaded nothing from outside');
});
