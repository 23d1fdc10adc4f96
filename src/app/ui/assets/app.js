// rewind ui: the page. Plain JS, no build step. It speaks the protocol of
// docs/protocol.md through POST /api/rpc (read methods, their own params and
// results) and writes through POST /api/write in two steps: a plan with a
// token, shown to the person, then the same request with the token.
'use strict';

const TOKEN = document.querySelector('meta[name="rewind-token"]').content;
const READ_ONLY = document.querySelector('meta[name="rewind-read-only"]').content === 'true';
const MAX_DIFF_LINES = 6000;

const $ = (id) => document.getElementById(id);

const state = {
  session: null,        // file name in the store; null = the newest
  checkpoints: [],      // list_checkpoints (scope all)
  byId: new Map(),
  tree: null,           // get_tree
  selected: null,       // entry id shown in the detail card
  a: null,              // compare from: entry id (null = baseline)
  b: '@working',        // compare to: entry id or '@working'
  files: [],            // get_modified_files of (a, b)
  fileIndex: -1,
  split: false,
  query: '',
  rpcId: 0,
};

// ---- talking to the server -------------------------------------------------

class ApiError extends Error {
  constructor(error, status) {
    super(error && error.message ? error.message : `HTTP ${status}`);
    this.code = error && error.code;
    this.status = status;
  }
}

async function rpc(method, params) {
  const body = { jsonrpc: '2.0', id: ++state.rpcId, method, params: params || null };
  if (state.session) body.session = state.session;
  const r = await fetch('/api/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-rewind-token': TOKEN },
    body: JSON.stringify(body),
  });
  let j;
  try { j = await r.json(); } catch (e) { throw new ApiError({ message: `HTTP ${r.status}` }, r.status); }
  if (j.error) throw new ApiError(j.error, r.status);
  return j.result;
}

async function write(method, params, token, conversation) {
  const body = { method, params };
  if (token) body.token = token;
  if (conversation && conversation !== 'files') body.conversation = conversation;
  if (state.session) body.session = state.session;
  const r = await fetch('/api/write', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-rewind-token': TOKEN },
    body: JSON.stringify(body),
  });
  let j = {};
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  if (r.status === 409 && j.token) return { status: 409, body: j };
  if (!r.ok || j.error) throw new ApiError(j.error || { message: `HTTP ${r.status}` }, r.status);
  return { status: r.status, body: j };
}

async function postJson(path, payload) {
  const body = { ...payload };
  if (state.session) body.session = state.session;
  const r = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-rewind-token': TOKEN },
    body: JSON.stringify(body),
  });
  let j = {};
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok || j.error) throw new ApiError(j.error || { message: `HTTP ${r.status}` }, r.status);
  return j;
}

async function getJson(path) {
  const r = await fetch(path, { headers: { 'x-rewind-token': TOKEN } });
  const j = await r.json();
  if (!r.ok) throw new ApiError(j.error, r.status);
  return j;
}

// ---- small helpers -----------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function toast(message, kind) {
  const t = $('toast');
  t.textContent = message;
  t.className = kind || '';
  t.hidden = false;
  clearTimeout(toast.timer);
  // 'long': a command to copy stays up for a while.
  toast.timer = setTimeout(() => { t.hidden = true; }, kind === 'long' ? 30000 : kind === 'error' ? 12000 : 5000);
}

function showError(e) {
  const locked = e.status === 423;
  toast((locked ? 'The session is busy: ' : 'Error: ') + e.message, 'error');
}

function timeOf(ts) {
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return ts || '';
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString() : d.toLocaleString();
}

function shortId(id) { return id ? id.slice(0, 8) : ''; }

function pointName(p) {
  if (p === null) return 'baseline';
  if (p === '@working') return 'working directory';
  const c = state.byId.get(p);
  return c ? `turn ${c.turnIndex} · ${shortId(p)}` : shortId(p);
}

function rangeParams() {
  const p = {};
  if (state.a) p.fromEntryId = state.a;
  p.toEntryId = state.b || '@working';
  return p;
}

// ---- sessions ----------------------------------------------------------------

async function loadSessions() {
  const [info, list] = await Promise.all([getJson('/api/info'), getJson('/api/sessions')]);
  $('project').textContent = info.projectRoot || '';
  const sel = $('session-select');
  sel.replaceChildren();
  for (const s of list.sessions) {
    sel.append(el('option', { value: s.name, text: `${s.name.replace(/\.jsonl$/, '')}  (${timeOf(s.modified)})` }));
  }
  const want = state.session || info.defaultSession;
  if (want) sel.value = want;
  state.session = sel.value || null;
}

// ---- timeline ----------------------------------------------------------------

// The checkpoints as a tree: each one's parent is its nearest ancestor that
// is a checkpoint. The current path runs down the left; branches off it are
// indented, shown before the path continues.
function layout(checkpoints, tree) {
  const byId = new Map(checkpoints.map((c) => [c.entryId, c]));
  const parentOf = new Map(tree.entries.map((e) => [e.id, e.parentId]));
  const up = (id) => { let p = id; while (p && !byId.has(p)) p = parentOf.get(p); return p || null; };
  const kids = new Map();
  const roots = [];
  for (const c of checkpoints) {
    const p = up(c.parentId);
    if (p) { if (!kids.has(p)) kids.set(p, []); kids.get(p).push(c); } else roots.push(c);
  }
  const rows = [];
  const stack = roots.slice().reverse().map((c) => [c, 0]);
  while (stack.length) {
    const [c, depth] = stack.pop();
    rows.push({ c, depth, branches: (kids.get(c.entryId) || []).length > 1 });
    const ks = (kids.get(c.entryId) || []).slice().sort((x, y) => x.timestamp.localeCompare(y.timestamp));
    if (!ks.length) continue;
    let main = ks.find((k) => k.onCurrentPath) || ks[ks.length - 1];
    stack.push([main, depth]);
    for (const k of ks.slice().reverse()) if (k !== main) stack.push([k, depth + 1]);
  }
  let current = tree.leafId;
  while (current && !byId.has(current)) current = parentOf.get(current);
  return { rows, current };
}

async function loadTimeline() {
  const [list, tree] = await Promise.all([
    rpc('list_checkpoints', { scope: 'all' }),
    rpc('get_tree'),
  ]);
  state.checkpoints = list.checkpoints;
  state.byId = new Map(list.checkpoints.map((c) => [c.entryId, c]));
  state.tree = tree;
  state.initial = list.initialEntryId || null;
  let matches = null;
  if (state.query) {
    const found = await rpc('list_checkpoints', { scope: 'all', query: state.query });
    matches = new Set(found.checkpoints.map((c) => c.entryId));
  }
  renderTimeline(matches);
}

function renderTimeline(matches) {
  const { rows, current } = layout(state.checkpoints, state.tree);
  state.current = current;
  const ol = $('timeline');
  ol.replaceChildren();
  let shown = 0;
  for (const { c, depth, branches } of rows) {
    if (matches && !matches.has(c.entryId)) continue;
    shown++;
    const label = c.label || '';
    const li = el('li', {
      class: ['cp', c.onCurrentPath ? 'on-path' : 'off-path', c.entryId === current ? 'current' : '',
        c.entryId === state.selected ? 'selected' : '', `kind-${c.kind}`].join(' '),
      'data-id': c.entryId,
      'data-depth': String(Math.min(depth, 8)),
      title: c.entryId,
      onclick: () => selectCheckpoint(c.entryId),
    },
    el('span', { class: 'node', text: c.entryId === current ? '●' : (branches ? '◆' : '○') }),
    el('span', { class: 'turn', text: `#${c.turnIndex}` }),
    el('span', { class: `kind`, text: c.kind }),
    el('span', { class: 'label', text: label }),
    c.tool ? el('span', { class: 'tool', text: c.tool }) : null,
    c.gitBranch ? el('span', { class: 'branch', text: `⎇ ${c.gitBranch}` }) : null,
    el('span', { class: 'counts' },
      el('span', { class: 'add', text: `+${c.added}` }),
      el('span', { class: 'mod', text: `~${c.modified}` }),
      el('span', { class: 'del', text: `-${c.deleted}` })),
    c.note ? el('span', { class: 'note', title: c.note, text: '✎' }) : null,
    c.entryId === current ? el('span', { class: 'here', text: 'current' }) : null,
    el('time', { datetime: c.timestamp, text: timeOf(c.timestamp) }),
    el('span', { class: 'pick' },
      el('button', { type: 'button', class: state.a === c.entryId ? 'on' : '', title: 'compare from here',
        onclick: (ev) => { ev.stopPropagation(); setPoints(c.entryId, state.b); } }, 'A'),
      el('button', { type: 'button', class: state.b === c.entryId ? 'on' : '', title: 'compare to here',
        onclick: (ev) => { ev.stopPropagation(); setPoints(state.a, c.entryId); } }, 'B'),
      rowRestoreButton(c)));
    ol.append(li);
  }
  $('timeline-count').textContent = matches
    ? `${shown} of ${state.checkpoints.length} match` : `${state.checkpoints.length} checkpoints`;
}

// One-click rollback per row: the card's "Restore all files to here…" for
// this row's checkpoint (the same request, plan and confirmation).
function rowRestoreButton(c) {
  if (READ_ONLY) return null;
  return el('button', { type: 'button', class: 'write row-restore', title: `restore all files to turn ${c.turnIndex} (${shortId(c.entryId)}): plan first`,
    'aria-label': `restore all files to ${shortId(c.entryId)}`,
    onclick: (ev) => { ev.stopPropagation(); restoreAllTo(c); } }, '⟲');
}

function restoreAllTo(c) {
  startWrite('restore_files', { targetEntryId: c.entryId }, `Restore all files to turn ${c.turnIndex} (${shortId(c.entryId)})`);
}

function selectCheckpoint(id) {
  state.selected = id;
  const c = state.byId.get(id);
  for (const li of document.querySelectorAll('#timeline li.cp')) li.classList.toggle('selected', li.dataset.id === id);
  if (!c) return;
  $('checkpoint').hidden = false;
  $('cp-id').textContent = shortId(id);
  const facts = [
    ['entry', id], ['kind', c.kind], ['turn', String(c.turnIndex)], ['label / prompt', c.label || '—'],
    ['note', c.note || '—'], ['tool', c.tool || '—'], ['git branch', c.gitBranch || '—'],
    ['changes', `+${c.added} ~${c.modified} -${c.deleted}`], ['time', `${timeOf(c.timestamp)} (${c.timestamp})`],
    ['tree', c.treeHash], ['on current path', c.onCurrentPath ? 'yes' : 'no'],
  ];
  const dl = $('cp-facts');
  dl.replaceChildren();
  for (const [k, v] of facts) dl.append(el('dt', { text: k }), el('dd', { text: v }));
  $('cp-revert').disabled = c.kind === 'baseline';
  $('cp-revert').title = c.kind === 'baseline' ? 'the baseline records the project as rewind found it: nothing to revert' : 'take this checkpoint\'s changes out of the working directory, keeping later ones (plan first)';
  fillLabelForm(c);
  // A click compares the checkpoint with the working directory, unless both
  // points were picked by hand.
  if (!state.pinned) setPoints(id, '@working');
}

// ---- compare -------------------------------------------------------------------

async function setPoints(a, b) {
  state.a = a;
  state.b = b;
  state.pinned = b !== '@working';
  $('point-a').textContent = pointName(a);
  $('point-b').textContent = pointName(b);
  for (const li of document.querySelectorAll('#timeline li.cp')) {
    const [ba, bb] = li.querySelectorAll('.pick button');
    ba.classList.toggle('on', li.dataset.id === a);
    bb.classList.toggle('on', li.dataset.id === b);
  }
  await loadFiles();
}

// `keep`: a live update, which keeps the file and the tab (blame, history)
// shown when its answer arrives, not those shown when it was asked: a click
// on another file or tab meanwhile is not undone.
async function loadFiles(keep) {
  let r;
  const seq = state.filesSeq = (state.filesSeq || 0) + 1;
  try { r = await rpc('get_modified_files', rangeParams()); } catch (e) { showError(e); return; }
  // A later call (other points picked meanwhile) has the say.
  if (seq !== state.filesSeq) return;
  const shown = keep ? state.files[state.fileIndex] : null;
  const keepPath = shown && shown.path;
  const keepTab = keep ? state.tab : undefined;
  state.files = r.files;
  const ul = $('files');
  ul.replaceChildren();
  r.files.forEach((f, i) => {
    const st = { added: 'A', modified: 'M', deleted: 'D', notCaptured: '?', recaptured: 'C' }[f.status] || '?';
    const why = f.reason ? ` (${f.status === 'recaptured' ? 'not captured before' : 'not captured'}: ${f.reason})` : '';
    ul.append(el('li', { class: `file st-${f.status}`, 'data-path': f.path, title: `${f.status}${why}`, onclick: () => openFile(i) },
      el('input', { type: 'checkbox', class: 'choose write', title: 'choose for restore',
        onclick: (ev) => { ev.stopPropagation(); updateChosen(); } }),
      el('span', { class: 'st', text: st }),
      el('span', { class: 'path', text: f.path }),
      f.turnIndex !== undefined && f.turnIndex !== null ? el('span', { class: 'turn', text: `#${f.turnIndex}` }) : null));
  });
  $('files-count').textContent = `${r.files.length} changed file${r.files.length === 1 ? '' : 's'}`;
  updateChosen();
  const again = keepPath ? r.files.findIndex((f) => f.path === keepPath) : -1;
  if (again >= 0 && keepTab === 'blame') { state.fileIndex = again; markFile(again); loadBlame(); }
  else if (again >= 0 && keepTab === 'history') { state.fileIndex = again; markFile(again); loadHistory(); }
  else if (again >= 0) openFile(again);
  else if (r.files.length) openFile(0);
  else { state.fileIndex = -1; $('file-head').replaceChildren(); $('diff').replaceChildren(el('p', { class: 'empty', text: 'No differences between the two points.' })); $('file-tabs').hidden = true; }
}

function chosenFiles() {
  return [...document.querySelectorAll('#files li')].filter((li) => li.querySelector('input.choose').checked)
    .map((li) => li.dataset.path);
}

function updateChosen() {
  const n = chosenFiles().length;
  const btn = $('restore-chosen');
  btn.disabled = n === 0 || !state.a;
  btn.textContent = `Restore ${n || ''} checked file${n === 1 ? '' : 's'} to A…`;
}

function markFile(i) {
  const f = state.files[i];
  for (const li of document.querySelectorAll('#files li')) li.classList.toggle('on', li.dataset.path === f.path);
  const li = document.querySelector(`#files li:nth-child(${i + 1})`);
  if (li) li.scrollIntoView({ block: 'nearest' });
  $('file-tabs').hidden = false;
}

async function openFile(i) {
  if (i < 0 || i >= state.files.length) return;
  state.fileIndex = i;
  const f = state.files[i];
  markFile(i);
  showTab('diff');
  $('file-head').replaceChildren(el('h3', { text: f.path }));
  $('diff').replaceChildren(el('p', { class: 'empty', text: 'loading…' }));
  state.patchCache = null;
  let d;
  try {
    d = await rpc('get_file_diff', { filePath: f.path, ...rangeParams(), contextLines: 3 });
  } catch (e) { showError(e); return; }
  if (state.files[state.fileIndex] !== f) return;
  let nb = null;
  if (d && !d.isBinary && !d.isTooLarge && isNotebookName(f.path)) {
    try { nb = (await postJson('/api/notebook', { params: { filePath: f.path, ...rangeParams() } })).notebook; } catch (e) { nb = null; }
    if (state.files[state.fileIndex] !== f) return;
  }
  renderDiff(f, d, nb);
}

function renderDiff(f, d, nb) {
  const head = $('file-head');
  const flags = [];
  if (d && d.isBinary) flags.push(el('span', { class: 'badge flag', text: 'binary' }));
  if (d && d.isTooLarge) flags.push(el('span', { class: 'badge flag', text: 'too large to diff' }));
  if (d && d.isApproximate) flags.push(el('span', { class: 'badge', text: 'approximate' }));
  head.replaceChildren(el('h3', { text: f.path }),
    d ? el('span', { class: 'counts' }, el('span', { class: 'add', text: `+${d.additions}` }), el('span', { class: 'del', text: ` -${d.deletions}` })) : null,
    ...flags, diffTools(f, d, nb));
  const box = $('diff');
  box.replaceChildren();
  if (!d) { box.append(el('p', { class: 'empty', text: 'No difference.' })); return; }
  if (d.isBinary || d.isTooLarge) {
    box.append(el('p', { class: 'empty', text: d.isBinary ? 'Binary file: not shown as text.' : 'Too large to diff.' }));
    return;
  }
  if (nb && !state.rawNotebook) { renderNotebook(nb); return; }
  const hunks = parseUnified(d.unifiedDiff || '');
  const lang = languageOf(f.path);
  const tools = hunkTools(f);
  box.append(state.split ? splitTable(hunks, lang, tools) : unifiedTable(hunks, lang, tools));
}

// The hunks of a unified diff: [{header, lines: [{t: ' '|'-'|'+', text, o, n}]}].
function parseUnified(text) {
  const hunks = [];
  let h = null, o = 0, n = 0, count = 0;
  for (const line of text.split('\n')) {
    if (count > MAX_DIFF_LINES) break;
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (m) { h = { header: line, lines: [] }; hunks.push(h); o = +m[1]; n = +m[2]; continue; }
    if (!h) continue;
    const t = line[0];
    if (t === ' ') h.lines.push({ t, text: line.slice(1), o: o++, n: n++ });
    else if (t === '-') h.lines.push({ t, text: line.slice(1), o: o++ });
    else if (t === '+') h.lines.push({ t, text: line.slice(1), n: n++ });
    else if (t === '\\') h.lines.push({ t, text: line });
    count++;
  }
  hunks.cut = count > MAX_DIFF_LINES;
  return hunks;
}

const LANGS = {
  rs: 'rust', js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript', ts: 'typescript',
  tsx: 'typescript', py: 'python', go: 'go', java: 'java', c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', hpp: 'cpp',
  cs: 'csharp', css: 'css', scss: 'scss', html: 'xml', htm: 'xml', xml: 'xml', svg: 'xml', json: 'json',
  yml: 'yaml', yaml: 'yaml', md: 'markdown', sh: 'bash', bash: 'bash', toml: 'ini', ini: 'ini', sql: 'sql',
  rb: 'ruby', php: 'php', kt: 'kotlin', swift: 'swift', lua: 'lua', pl: 'perl', r: 'r', diff: 'diff',
};

function languageOf(path) {
  const base = path.split('/').pop();
  if (base === 'Makefile') return 'makefile';
  if (base === 'Dockerfile') return 'dockerfile';
  const ext = base.includes('.') ? base.split('.').pop().toLowerCase() : '';
  const lang = LANGS[ext];
  return lang && window.hljs && window.hljs.getLanguage(lang) ? lang : null;
}

function code(text, lang) {
  const c = el('code', { class: 'src' });
  if (lang) {
    try { c.innerHTML = window.hljs.highlight(text, { language: lang, ignoreIllegals: true }).value; return c; } catch (e) { /* plain */ }
  }
  c.textContent = text;
  return c;
}

function cutNote(hunks) {
  return hunks.cut ? el('p', { class: 'warn', text: `Only the first ${MAX_DIFF_LINES} lines of the diff are shown.` }) : null;
}

// `tools(i)`: the controls shown on hunk i's header row (the diff view's
// copy buttons), or none.
function hunkHead(h, i, span, tools) {
  const extra = tools ? tools(i, h.header) : null;
  return el('tr', { class: 'hunk', 'data-hunk': String(i) }, el('td', { colspan: span }, el('span', { class: 'hunk-header', text: h.header }), extra));
}

function unifiedTable(hunks, lang, tools) {
  const t = el('table', { class: 'diff unified' },
    el('colgroup', {}, el('col', { class: 'c-ln' }), el('col', { class: 'c-ln' }), el('col', {})));
  for (const [i, h] of hunks.entries()) {
    t.append(hunkHead(h, i, '3', tools));
    for (const l of h.lines) {
      const cls = l.t === '+' ? 'ins' : l.t === '-' ? 'del' : l.t === '\\' ? 'meta' : 'ctx';
      t.append(el('tr', { class: cls },
        el('td', { class: 'ln', text: l.o !== undefined ? String(l.o) : '' }),
        el('td', { class: 'ln', text: l.n !== undefined ? String(l.n) : '' }),
        el('td', { class: 'line' }, el('span', { class: 'sign', text: l.t === '\\' ? '' : l.t }), code(l.text, l.t === '\\' ? null : lang))));
    }
  }
  const wrap = el('div', {}, t);
  const note = cutNote(hunks);
  if (note) wrap.append(note);
  return wrap;
}

function splitTable(hunks, lang, tools) {
  const t = el('table', { class: 'diff split' },
    el('colgroup', {}, el('col', { class: 'c-ln' }), el('col', {}), el('col', { class: 'c-ln' }), el('col', {})));
  const cell = (l, side) => l
    ? [el('td', { class: 'ln', text: String(side === 'o' ? l.o : l.n) }), el('td', { class: `line ${l.t === ' ' ? 'ctx' : side === 'o' ? 'del' : 'ins'}` }, code(l.text, lang))]
    : [el('td', { class: 'ln' }), el('td', { class: 'line void' })];
  for (const [k, h] of hunks.entries()) {
    t.append(hunkHead(h, k, '4', tools));
    let i = 0;
    const ls = h.lines.filter((l) => l.t !== '\\');
    while (i < ls.length) {
      if (ls[i].t === ' ') { t.append(el('tr', {}, ...cell(ls[i], 'o'), ...cell(ls[i], 'n'))); i++; continue; }
      const dels = [], adds = [];
      while (i < ls.length && ls[i].t === '-') dels.push(ls[i++]);
      while (i < ls.length && ls[i].t === '+') adds.push(ls[i++]);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        t.append(el('tr', {}, ...cell(dels[k], 'o'), ...cell(adds[k], 'n')));
      }
    }
  }
  const wrap = el('div', {}, t);
  const note = cutNote(hunks);
  if (note) wrap.append(note);
  return wrap;
}

function showTab(which) {
  state.tab = which;
  for (const t of ['diff', 'history', 'blame']) {
    $(t).hidden = t !== which;
    $(`tab-${t}`).classList.toggle('on', t === which);
  }
}

async function loadHistory() {
  const f = state.files[state.fileIndex];
  if (!f) return;
  showTab('history');
  const box = $('history');
  box.replaceChildren(el('p', { class: 'empty', text: 'loading…' }));
  let h;
  try { h = await rpc('get_file_history', { filePath: f.path, scope: 'all' }); } catch (e) { showError(e); return; }
  const t = el('table', { class: 'history' },
    el('tr', {}, ...['turn', 'kind', 'label', 'status', 'time', ''].map((x) => el('th', { text: x }))));
  for (const v of h.versions) {
    t.append(el('tr', {},
      el('td', { text: `#${v.turnIndex}` }), el('td', { text: v.kind }), el('td', { text: v.label || '' }),
      el('td', { text: v.reason ? `${v.status} (${v.reason})` : v.status }), el('td', { text: timeOf(v.timestamp) }),
      el('td', {},
        el('button', { type: 'button', onclick: () => { setPoints(v.entryId, '@working'); } }, 'diff to working'),
        READ_ONLY || v.status === 'deleted' || v.status === 'notCaptured' ? null : el('button', { type: 'button', class: 'write',
          onclick: () => startWrite('restore_files', { targetEntryId: v.entryId, files: [f.path] }, `Restore ${f.path} as of turn ${v.turnIndex}`) }, 'restore this version…'))));
  }
  box.replaceChildren(el('p', { text: `${h.versions.length} recorded version(s) of ${h.path}` }), t);
}

// Blame by turn (`get_file_blame`) at point B: each line with the checkpoint
// that introduced it. Consecutive lines of one checkpoint form a group whose
// first row names it (turn, label or prompt, entry id); a click on it selects
// that checkpoint in the timeline.
async function loadBlame() {
  const f = state.files[state.fileIndex];
  if (!f) return;
  showTab('blame');
  const box = $('blame');
  box.replaceChildren(el('p', { class: 'empty', text: 'loading…' }));
  const at = state.b || '@working';
  let r;
  try { r = await rpc('get_file_blame', { path: f.path, at }); } catch (e) {
    box.replaceChildren(el('p', { class: 'empty', text: `No blame for ${f.path} at ${pointName(at)}: ${e.message}` }));
    return;
  }
  if (state.files[state.fileIndex] !== f) return;
  renderBlame(f, r, at);
}

function truncate(text, n) {
  const t = (text || '').replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

function renderBlame(f, r, at) {
  const box = $('blame');
  const lang = languageOf(f.path);
  const lines = r.lines.slice(0, MAX_DIFF_LINES);
  const t = el('table', { class: 'blame' },
    el('colgroup', {}, el('col', { class: 'c-who' }), el('col', { class: 'c-ln' }), el('col', {})));
  let prev;
  let group = -1;
  for (const l of lines) {
    const key = l.entryId || '';
    const start = prev === undefined || key !== prev;
    if (start) group++;
    prev = key;
    let who;
    if (!start) who = el('td', { class: 'who' });
    else if (!l.entryId) who = el('td', { class: 'who uncommitted', title: 'not in any checkpoint yet' }, el('span', { class: 'turn', text: 'working' }), el('span', { class: 'lbl', text: 'not checkpointed yet' }));
    else {
      const label = l.label || l.kind;
      who = el('td', { class: 'who', 'data-entry': l.entryId,
        title: `${l.entryId}\nturn ${l.turnIndex} · ${l.kind}${l.label ? `\n${l.label}` : ''}${l.timestamp ? `\n${l.timestamp}` : ''}`,
        onclick: () => revealCheckpoint(l.entryId) },
      el('span', { class: 'turn', text: `#${l.turnIndex}` }),
      el('span', { class: 'lbl', text: truncate(label, 40) }),
      el('code', { class: 'eid', text: shortId(l.entryId) }));
    }
    t.append(el('tr', { class: `${start ? 'grp-start ' : ''}${group % 2 ? 'odd' : 'even'}`, 'data-line': String(l.line), 'data-entry': l.entryId || '', 'data-turn': String(l.turnIndex) },
      who,
      el('td', { class: 'ln', text: String(l.line) }),
      el('td', { class: 'line' }, code(l.text, lang))));
  }
  const groups = group + 1;
  box.replaceChildren(...[
    el('p', { class: 'blame-head', text: `${r.lines.length} line(s) of ${r.path} at ${pointName(at)}, from ${groups} stretch(es) of checkpoints. Click a checkpoint to select it in the timeline.` }),
    r.isApproximate ? el('p', { class: 'warn', text: 'Approximate: some line diff ran out of its budget; a stretch shown as replaced wholesale is attributed to the later checkpoint.' }) : null,
    t,
    r.lines.length > MAX_DIFF_LINES ? el('p', { class: 'warn', text: `Only the first ${MAX_DIFF_LINES} lines are shown.` }) : null,
  ].filter(Boolean));
}

// Select a checkpoint in the timeline (its card, highlighted, scrolled to)
// without changing what is compared.
function revealCheckpoint(id) {
  const keep = state.pinned;
  state.pinned = true;
  selectCheckpoint(id);
  state.pinned = keep;
  const li = document.querySelector(`#timeline li.cp[data-id="${id}"]`);
  if (li) li.scrollIntoView({ block: 'nearest' });
}

// ---- diff view: copy as patch, hunks, notebooks by cell ---------------------------
// The patch text and the notebook's cells are the server's (POST /api/patch,
// POST /api/notebook: the engine's, as `rewind diff` prints them); the page
// shows and copies them.

// The patch of the file shown, fetched once per file shown.
async function filePatch(f) {
  const key = `${state.a}|${state.b}|${f.path}`;
  if (state.patchCache && state.patchCache.key === key) return state.patchCache.file;
  const r = await postJson('/api/patch', { params: rangeParams(), files: [f.path] });
  const file = r.files.find((x) => x.path === f.path) || null;
  state.patchCache = { key, file };
  return file;
}

const NOT_IN_PATCH = {
  tooLarge: 'it is too large to diff',
  notCaptured: 'one end did not capture it, so its content is unknown',
  permissionsOnly: 'only permission bits git does not record changed',
};

async function copyText(text, what) {
  let ok = false;
  try { await navigator.clipboard.writeText(text); ok = true; } catch (e) { /* the fallback below */ }
  if (!ok) {
    const ta = el('textarea', { class: 'copy-buffer', 'aria-hidden': 'true' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    ta.remove();
  }
  if (ok) toast(`Copied ${what}.`);
  else toast(`Could not copy ${what}: the browser refused the clipboard.`, 'error');
}

function diffTools(f, d, nb) {
  return el('span', { class: 'diff-tools' },
    nb ? el('button', { type: 'button', id: 'notebook-raw', title: 'the notebook\'s cells, or the diff of its raw JSON',
      onclick: () => { state.rawNotebook = !state.rawNotebook; renderDiff(f, d, nb); } }, state.rawNotebook ? 'Show cells' : 'Raw JSON') : null,
    d ? el('button', { type: 'button', id: 'copy-file-patch', title: 'this file\'s changes as a patch git apply takes',
      onclick: () => copyFilePatch(f) }, 'Copy as patch') : null,
    el('button', { type: 'button', id: 'copy-all-patch', title: 'every changed file from A to B as one patch git apply takes',
      onclick: copyAllPatch }, 'Copy all as patch'));
}

async function copyFilePatch(f) {
  let p;
  try { p = await filePatch(f); } catch (e) { showError(e); return; }
  if (!p || !p.patch) { toast(`${f.path} is not in a patch: ${(p && NOT_IN_PATCH[p.content]) || 'no difference'}.`, 'error'); return; }
  await copyText(p.patch, p.content === 'binary' ? `the patch of ${f.path} (binary: git apply refuses it without git's copy of both versions)` : `the patch of ${f.path}`);
}

async function copyAllPatch() {
  let r;
  try { r = await postJson('/api/patch', { params: rangeParams() }); } catch (e) { showError(e); return; }
  const left = r.files.filter((x) => NOT_IN_PATCH[x.content]).map((x) => x.path);
  await copyText(r.patch, `the patch of ${r.files.length - left.length} file(s)${left.length ? ` (left out: ${left.join(', ')})` : ''}`);
}

// The copy buttons of a hunk in the diff view: the hunk as a patch of its
// own (the file's header and the hunk), or its lines as they read at B.
function hunkTools(f) {
  return (i, header) => el('span', { class: 'hunk-tools' },
    el('button', { type: 'button', class: 'copy-hunk', title: 'this hunk as a patch git apply takes', onclick: () => copyHunk(f, i, header, 'patch') }, 'copy hunk'),
    el('button', { type: 'button', class: 'copy-new', title: 'the hunk\'s lines as they read at B, without the diff\'s signs', onclick: () => copyHunk(f, i, header, 'newText') }, 'copy new text'));
}

async function copyHunk(f, i, header, which) {
  let p;
  try { p = await filePatch(f); } catch (e) { showError(e); return; }
  const h = p && p.hunks[i];
  // The patch cuts lines at newlines only (as git does): a file with lone
  // carriage returns can have other hunks there than the ones shown.
  if (!h || !h.patch.includes(`\n${header}\n`)) {
    toast('This hunk reads differently as a patch (the file changed meanwhile, or has carriage returns alone): copy the file\'s patch instead.', 'error');
    return;
  }
  await copyText(h[which], which === 'patch' ? `hunk ${i + 1} as a patch` : `the new text of hunk ${i + 1}`);
}

function isNotebookName(path) { return /\.ipynb$/i.test(path); }

function highlightable(lang) { return lang && window.hljs && window.hljs.getLanguage(lang) ? lang : null; }

// A notebook by cell: each cell's place, type and status, its source's diff
// (highlighted in the notebook's language, markdown as markdown) and its
// outputs in words.
function renderNotebook(nb) {
  const box = $('diff');
  box.replaceChildren();
  const codeLang = highlightable(nb.language);
  const changed = nb.cells.filter((c) => c.status !== 'unchanged' || c.outputsChanged).length;
  const wrap = el('div', { class: 'notebook' },
    el('p', { class: 'nb-head', text: `Notebook${nb.language ? ` (${nb.language})` : ''}: ${changed} of ${nb.cells.length} cell(s) changed.` }),
    nb.approximate ? el('p', { class: 'warn', text: 'Approximate: some cell\'s diff ran out of its budget.' }) : null);
  for (const c of nb.cells) {
    const where = c.newIndex !== null && c.newIndex !== undefined ? `cell ${c.newIndex}` : `cell ${c.oldIndex} of A`;
    const moved = c.oldIndex && c.newIndex && c.oldIndex !== c.newIndex ? ` (was ${c.oldIndex})` : '';
    const what = c.status === 'unchanged' ? (c.outputsChanged ? 'outputs changed' : 'unchanged') : c.status;
    const cell = el('div', { class: `nb-cell st-${c.status}${c.outputsChanged ? ' out-changed' : ''}` },
      el('div', { class: 'nb-cell-head' },
        el('span', { class: 'nb-where', text: where + moved }),
        el('span', { class: 'kind', text: c.cellType }),
        el('span', { class: 'nb-status', text: what })));
    const lang = c.cellType === 'markdown' ? highlightable('markdown') : c.cellType === 'code' ? codeLang : null;
    if (c.sourceDiff) cell.append(unifiedTable(parseUnified(c.sourceDiff), lang));
    if (c.outputs) cell.append(el('p', { class: 'nb-out', text: `${c.outputs}${c.outputsChanged ? ' (changed)' : ''}` }));
    wrap.append(cell);
  }
  box.append(wrap);
}

// ---- dialog: git's words ---------------------------------------------------------
// A plan's notes as the CLI prints them (app/plan.rs `plan_notes`): what git
// did since, on lines of their own; other warnings as warnings.
function renderPlanNotes(list, notes, warnings) {
  const all = notes || (warnings || []).map((text) => ({ kind: 'warning', text }));
  for (const n of all) {
    list.append(n.kind === 'git' ? el('li', { class: 'git', text: n.text }) : el('li', { text: `warning: ${n.text}` }));
  }
}

// ---- writes: plan, then confirm -----------------------------------------------

let pending = null;

async function startWrite(method, params, title, conversation) {
  let r;
  try { r = await write(method, params, undefined, conversation); } catch (e) { showError(e); return; }
  showPlan(method, params, title, r.body, false, conversation);
}

function showPlan(method, params, title, body, stale, conversation) {
  pending = { method, params, title, token: body.token, conversation };
  $('plan-title').textContent = title;
  const st = $('plan-stale');
  st.hidden = !stale;
  st.textContent = stale ? 'Not executed: the files or the session changed since the plan was shown. Nothing was written. This is the new plan:' : '';
  const plan = body.plan || {};
  const restore = method === 'navigate_tree' ? (plan.restore || {}) : plan;
  const files = body.files || [];
  const writes = files.filter((f) => f.action === 'write').length;
  const deletes = files.filter((f) => f.action === 'delete').length;
  const revert = method === 'revert';
  const conflicts = revert ? (plan.files || []).filter((f) => f.status === 'conflict').length : 0;
  const onConflict = params.onConflict || 'abort';
  const refused = revert && conflicts > 0 && onConflict === 'abort';
  $('plan-confirm').disabled = refused;
  $('plan-dialog').querySelector('.dialog').classList.toggle('wide', revert || !!hunkTarget(method, params));
  let summary;
  if (method === 'label') summary = labelSummary(params);
  else if (body.conversationOnly) summary = 'No file is written: the agent\'s conversation is forked as it was at this checkpoint, in a new session (the original is unchanged).';
  else {
    summary = `${writes} file(s) to write, ${deletes} to delete, ${files.length - writes - deletes} kept.`;
    if (revert) summary += ` ${conflicts} conflict(s): later changes overlap this checkpoint's.`;
    summary += refused
      ? ' With "abort" nothing would be written: choose "skip" or "markers", or cancel.'
      : ' The current state is checkpointed first, so Undo can put it back.';
  }
  $('plan-summary').textContent = summary;
  showPlanTarget(method, params);
  const table = $('plan-files');
  const cols = revert ? ['action', 'file', 'status', 'reason'] : ['action', 'file'];
  table.querySelector('thead').replaceChildren(el('tr', {}, ...cols.map((c) => el('th', { text: c }))));
  const tb = table.querySelector('tbody');
  tb.replaceChildren();
  for (const f of files) {
    tb.append(el('tr', { class: `act-${f.action}${f.status ? ` st-${f.status}` : ''}`, 'data-path': f.path },
      el('td', { text: f.action }), el('td', { text: f.path }),
      revert ? el('td', { class: 'status', text: f.status || '' }) : null,
      revert ? el('td', { text: f.reason || '' }) : null));
  }
  table.hidden = files.length === 0;
  const notes = $('plan-notes');
  notes.replaceChildren();
  for (const c of restore.conflicts || []) if (!revert) notes.append(el('li', { class: 'warn', text: `conflict: ${c.path} (${c.reason})` }));
  for (const u of restore.notCaptured || []) notes.append(el('li', { text: `left as it is: ${u.path} (the checkpoint did not capture it: ${u.reason})` }));
  renderPlanNotes(notes, body.notes, restore.warnings);
  if (conversation === 'both') notes.append(el('li', { text: 'The agent\'s conversation is forked as it was at this checkpoint too, in a new session (the original is unchanged).' }));
  renderPlanOptions(method, params, title, restore, conversation);
  $('plan-dialog').dataset.onConflict = revert ? onConflict : (params.onConflict || '');
  const details = $('plan-details');
  details.replaceChildren();
  if (revert) renderRevertDetails(plan);
  $('plan-dialog').hidden = false;
  if (!refused) $('plan-confirm').focus();
}

// The choices that change the plan (and so its token): a revert's
// onConflict; whether a restore, navigation or undo overwrites files changed
// since the last checkpoint; the hunks of a one-file restore. A change asks
// for the new plan.
function renderPlanOptions(method, params, title, restore, conversation) {
  const box = $('plan-options');
  box.replaceChildren();
  // A restore of a whole checkpoint: the files, the agent's conversation
  // (a fork holding everything before the checkpoint), or both.
  if (method === 'restore_files' && params.targetEntryId && !params.files && !params.hunks) {
    const sel = el('select', { id: 'plan-conversation', 'aria-label': 'what to restore' },
      ...[['files', 'files'], ['both', 'files and conversation'], ['only', 'conversation only']]
        .map(([v, t]) => el('option', { value: v, text: t })));
    sel.value = conversation || 'files';
    sel.addEventListener('change', () => startWrite(method, params, title, sel.value));
    box.append(el('label', {}, 'restore: ', sel));
  }
  const rollback = ['restore_files', 'navigate_tree', 'undo'].includes(method) && !params.hunks;
  if (rollback && ((restore.dirty || []).length || params.onConflict)) {
    const sel = el('select', { id: 'plan-onconflict', 'aria-label': 'changed files' },
      ...[['skip', 'keep them: leave files changed since the last checkpoint as they are'],
        ['overwrite', 'overwrite them too (the checkpoint taken first keeps their content; Undo brings it back)']]
        .map(([v, t]) => el('option', { value: v, text: t })));
    sel.value = params.onConflict || 'skip';
    sel.addEventListener('change', () => startWrite(method, { ...params, onConflict: sel.value }, title, conversation));
    box.append(el('label', {}, 'files changed since the last checkpoint: ', sel));
  }
  if (method === 'revert') {
    const sel = el('select', { id: 'plan-onconflict', 'aria-label': 'on conflict' },
      ...[['abort', 'abort: write nothing if any file conflicts'], ['skip', 'skip: write the clean files, leave conflicting ones'],
        ['markers', 'markers: write conflicting files with conflict markers']]
        .map(([v, t]) => el('option', { value: v, text: t })));
    sel.value = params.onConflict || 'abort';
    sel.addEventListener('change', () => startWrite(method, { ...params, onConflict: sel.value }, title));
    box.append(el('label', {}, 'on conflict ', sel));
  }
  const target = hunkTarget(method, params);
  if (target) renderHunkPicker(box, params, title, target);
}

// A restore of one file from a checkpoint: the file and the checkpoint.
function hunkTarget(method, params) {
  if (method !== 'restore_files' || !params.targetEntryId) return null;
  const path = params.files && params.files.length === 1 ? params.files[0]
    : params.hunks && params.hunks.length === 1 ? params.hunks[0].path : null;
  return path ? { path, entry: params.targetEntryId } : null;
}

const HUNK_CONTEXT = 3;

async function renderHunkPicker(box, params, title, target) {
  const holder = el('div', { id: 'plan-hunks' }, el('p', { class: 'empty', text: 'loading the hunks…' }));
  box.append(holder);
  let d;
  try {
    d = await rpc('get_file_diff', { filePath: target.path, fromEntryId: target.entry, toEntryId: '@working', contextLines: HUNK_CONTEXT });
  } catch (e) { holder.replaceChildren(el('p', { class: 'empty', text: `No hunks: ${e.message}` })); return; }
  if (!d || d.isBinary || d.isTooLarge || !(d.hunks || []).length) { holder.replaceChildren(); return; }
  const chosen = params.hunks && params.hunks[0]
    ? new Set(params.hunks[0].hunks.map((h) => h.index)) : new Set(d.hunks.map((h) => h.index));
  const parsed = parseUnified(d.unifiedDiff || '');
  const lang = languageOf(target.path);
  const replan = () => {
    const picked = d.hunks.filter((h) => holder.querySelector(`input[data-index="${h.index}"]`).checked);
    const next = { targetEntryId: target.entry };
    if (picked.length === d.hunks.length) next.files = [target.path];
    else next.hunks = [{ path: target.path, contextLines: HUNK_CONTEXT, hunks: picked.map((h) => ({ index: h.index, hash: h.hash })) }];
    if (!picked.length) { $('plan-confirm').disabled = true; $('plan-summary').textContent = 'No hunk chosen: nothing to restore.'; return; }
    startWrite('restore_files', next, title);
  };
  holder.replaceChildren(el('p', { text: `Hunks of ${target.path} from ${pointName(target.entry)} to the working directory: each checked one is taken back (the diff's removed lines return, its added lines go).` }));
  d.hunks.forEach((h, i) => {
    const box2 = el('div', { class: 'hunk-pick' },
      el('label', {}, el('input', { type: 'checkbox', 'data-index': String(h.index), checked: chosen.has(h.index), onchange: replan }),
        ` hunk ${h.index + 1} of ${d.hunks.length}`));
    if (parsed[i]) box2.append(unifiedTable([parsed[i]], lang));
    holder.append(box2);
  });
}

// Each file of a revert: its diff (now → what the revert writes) and its
// conflicts, the lines as they are now and as they were before the
// checkpoint.
function renderRevertDetails(plan) {
  const box = $('plan-details');
  for (const f of plan.files || []) {
    const sec = el('details', { class: `revert-file st-${f.status}`, 'data-path': f.path, open: f.status === 'conflict' || (plan.files.length <= 4) },
      el('summary', {}, el('code', { text: f.path }), ` · ${f.status} · ${f.action}${f.reason ? ` · ${f.reason}` : ''}`));
    if (f.diff) sec.append(unifiedTable(parseUnified(f.diff), languageOf(f.path)));
    else sec.append(el('p', { class: 'empty', text: f.action === 'delete' ? 'The file is deleted.' : 'Nothing is written to this file.' }));
    (f.conflicts || []).forEach((c, i) => {
      sec.append(el('div', { class: 'conflict' },
        el('p', { class: 'warn', text: `conflict ${i + 1}: later changes touched these lines` }),
        el('div', { class: 'sides' },
          el('div', {}, el('h4', { text: 'now (current)' }), el('pre', { class: 'current', text: c.current })),
          el('div', {}, el('h4', { text: 'as this checkpoint left them' }), el('pre', { class: 'reverted', text: c.reverted })),
          el('div', {}, el('h4', { text: 'before this checkpoint' }), el('pre', { class: 'before', text: c.before })))));
    });
    box.append(sec);
  }
}

function closePlan() { $('plan-dialog').hidden = true; $('plan-confirm').disabled = false; pending = null; }

async function confirmPlan() {
  if (!pending) return;
  const p = pending;
  $('plan-confirm').disabled = true;
  let r;
  try { r = await write(p.method, p.params, p.token, p.conversation); } catch (e) { $('plan-confirm').disabled = false; closePlan(); showError(e); return; }
  $('plan-confirm').disabled = false;
  if (r.status === 409) { showPlan(p.method, p.params, p.title, r.body, true, p.conversation); return; }
  closePlan();
  const res = r.body.result || {};
  const restore = p.method === 'navigate_tree' ? (res.restore || {}) : res;
  const conv = r.body.conversation;
  if (conv && conv.refused) toast(`Files: wrote ${(restore.restored || []).length}. The conversation was not restored: ${conv.refused}`, 'error');
  else if (conv) toast(`${p.conversation === 'only' ? '' : `Wrote ${(restore.restored || []).length} file(s), deleted ${(restore.deleted || []).length}. `}Continue the conversation in a terminal in ${conv.project}: ${conv.commandLine}`, 'long');
  else if (p.method === 'label') toast('Saved.');
  else if (p.method === 'revert') toast(`Done: reverted, wrote ${(res.restored || []).length} file(s), deleted ${(res.deleted || []).length}${(res.failed || []).length ? `, ${res.failed.length} could not be touched` : ''}. Undo puts the state before it back.`);
  else toast(`Done: wrote ${(restore.restored || []).length} file(s), deleted ${(restore.deleted || []).length}.${restore.unrevertEntryId ? ' Undo puts the state before it back.' : ''}`);
  await refresh();
}

// ---- a person's checkpoints: the toolbar's "Create checkpoint", the label
// form, the paused badge and what is not protected ------------------------------

// The edit form opens with the checkpoint's label and note as they read now,
// and remembers them: a save sends only what the person changed, so editing
// the note of an automatic checkpoint keeps its label (and the reverse).
function fillLabelForm(c) {
  const form = $('label-form');
  form.dataset.target = c.entryId;
  form.dataset.label = c.label || '';
  form.dataset.note = c.note || '';
  $('label-input').value = c.label || '';
  $('note-input').value = c.note || '';
}

function submitLabelForm(ev) {
  ev.preventDefault();
  const form = $('label-form');
  if (!state.selected || form.dataset.target !== state.selected) return;
  const params = { targetId: state.selected };
  const label = $('label-input').value.trim();
  const note = $('note-input').value.trim();
  // Absent: kept as it is; null: removed; a string: the new text.
  if (label !== form.dataset.label.trim()) params.label = label || null;
  if (note !== form.dataset.note.trim()) params.note = note || null;
  if (!('label' in params) && !('note' in params)) { toast('Nothing changed.'); return; }
  startWrite('label', params, 'Label and note');
}

function labelSummary(params) {
  const what = (key) => !(key in params) ? null
    : params[key] === null ? `remove the ${key}` : `set the ${key} to "${params[key]}"`;
  const parts = [what('label'), what('note')].filter(Boolean);
  const kept = !('label' in params) ? ' The label stays as it is.' : !('note' in params) ? ' The note stays as it is.' : '';
  return `On ${shortId(params.targetId)}: ${parts.join(' and ')}.${kept}`;
}

// The checkpoint a restore, navigation or revert goes to, with its label and
// note, above the plan: what the person named it is what they recognise.
function showPlanTarget(method, params) {
  const box = $('plan-target');
  const id = method === 'restore_files' ? params.targetEntryId
    : method === 'navigate_tree' ? params.targetId
      : method === 'revert' ? params.entryId : null;
  const c = id ? state.byId.get(id) : null;
  box.hidden = !c;
  if (!c) { box.replaceChildren(); return; }
  box.replaceChildren(
    el('span', { text: `${c.kind} · turn ${c.turnIndex} · ${shortId(c.entryId)} · ` }),
    el('b', { class: 'target-label', text: c.label || '(no label)' }),
    c.note ? el('span', { class: 'target-note', text: ` — ${c.note}` }) : null);
}

function openCheckpointDialog() {
  $('checkpoint-name').value = '';
  $('checkpoint-note').value = '';
  $('checkpoint-dialog').hidden = false;
  $('checkpoint-name').focus();
}

function closeCheckpointDialog() { $('checkpoint-dialog').hidden = true; }

function wireCheckpointDialog() {
  $('checkpoint-btn').addEventListener('click', openCheckpointDialog);
  $('checkpoint-cancel').addEventListener('click', closeCheckpointDialog);
  $('checkpoint-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const label = $('checkpoint-name').value.trim();
    const note = $('checkpoint-note').value.trim();
    $('checkpoint-create').disabled = true;
    let r;
    try { r = await write('checkpoint', { label: label || null, note: note || null }); }
    catch (e) { showError(e); return; }
    finally { $('checkpoint-create').disabled = false; }
    closeCheckpointDialog();
    toast(capturedText(r.body.result || {}), 'long');
    await refresh();
  });
}

// What a checkpoint captured, as `rewind checkpoint` says it.
function capturedText(res) {
  const d = res.diff || {};
  const n = (k) => (d[k] || []).length;
  let t = `Checkpoint ${shortId(res.entryId)} (manual ${res.manualCount} of ${res.maxManual}): captured ${res.files} file(s), ${res.bytes} byte(s); since the previous checkpoint +${n('added')} ~${n('modified')} -${n('deleted')}.`;
  if (res.git) t += ` git: ${res.git.branch || '(detached)'} at ${(res.git.head || '').slice(0, 12) || '(no commit)'}.`;
  if ((res.leftOut || []).length) t += ` Left out: ${res.leftOut.map((u) => `${u.path} (${u.reason})`).join(', ')}.`;
  return t;
}

// Paused automatic checkpoints, and what the latest checkpoint left out.
async function loadProtection() {
  let p;
  const q = state.session ? `?session=${encodeURIComponent(state.session)}` : '';
  try { p = await getJson(`/api/protection${q}`); } catch (e) { return; }
  const badge = $('paused-badge');
  badge.hidden = !p.paused;
  badge.textContent = p.paused ? p.paused.text : '';
  const list = $('unprotected-list');
  list.replaceChildren();
  for (const u of p.leftOut || []) {
    list.append(el('li', { 'data-path': u.path },
      el('span', { class: 'path', text: u.path }), ' ',
      el('span', { class: 'why', text: `(${u.reason}): ${u.advice}` })));
  }
  $('unprotected').hidden = !(p.leftOut || []).length;
  $('unprotected-count').textContent = `${(p.leftOut || []).length} path(s)`;
}

// ---- refresh and live updates ----------------------------------------------------

async function refresh() {
  loadProtection();
  try {
    await loadTimeline();
    if (state.selected && state.byId.has(state.selected)) {
      // The card only: a refresh does not move the compare points.
      const keepPinned = state.pinned;
      state.pinned = true;
      selectCheckpoint(state.selected);
      state.pinned = keepPinned;
    }
    // A live update keeps the file and the tab (blame, history) shown.
    await loadFiles(true);
  } catch (e) { showError(e); }
}

let source = null;
function listen() {
  if (source) source.close();
  const q = state.session ? `?session=${encodeURIComponent(state.session)}` : '';
  source = new EventSource(`/api/events${q}`);
  source.addEventListener('change', () => {
    $('live').classList.add('pulse');
    setTimeout(() => $('live').classList.remove('pulse'), 800);
    clearTimeout(listen.timer);
    listen.timer = setTimeout(() => refresh(), 200);
  });
  source.onerror = () => $('live').classList.add('off');
  source.onopen = () => $('live').classList.remove('off');
}

// ---- wiring ------------------------------------------------------------------------

function wire() {
  if (READ_ONLY) {
    document.body.classList.add('read-only');
    $('read-only-badge').hidden = false;
  }
  $('session-select').addEventListener('change', async (ev) => {
    state.session = ev.target.value;
    state.selected = null; state.a = null; state.initial = null; state.b = '@working'; state.pinned = false;
    $('checkpoint').hidden = true;
    listen();
    await refresh();
    await setPoints(state.initial, '@working');
  });
  let searchTimer = null;
  $('search').addEventListener('input', (ev) => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(async () => { state.query = ev.target.value.trim(); try { await loadTimeline(); } catch (e) { showError(e); } }, 200);
  });
  $('b-working').addEventListener('click', () => setPoints(state.a, '@working'));
  $('split-toggle').addEventListener('change', (ev) => { state.split = ev.target.checked; openFile(state.fileIndex); });
  $('tab-diff').addEventListener('click', () => openFile(state.fileIndex));
  $('tab-history').addEventListener('click', loadHistory);
  $('tab-blame').addEventListener('click', loadBlame);
  $('cp-restore').addEventListener('click', () => {
    const c = state.byId.get(state.selected);
    if (c) restoreAllTo(c);
  });
  $('cp-navigate').addEventListener('click', () => {
    const c = state.byId.get(state.selected);
    if (c) startWrite('navigate_tree', { targetId: c.entryId }, `Navigate to turn ${c.turnIndex} (${shortId(c.entryId)})`);
  });
  $('cp-revert').addEventListener('click', () => {
    const c = state.byId.get(state.selected);
    if (c) startWrite('revert', { entryId: c.entryId, onConflict: 'abort' }, `Revert turn ${c.turnIndex} (${shortId(c.entryId)}): take its changes out, keep later ones`);
  });
  $('restore-chosen').addEventListener('click', () => {
    const files = chosenFiles();
    if (files.length && state.a) startWrite('restore_files', { targetEntryId: state.a, files }, `Restore ${files.length} file(s) to ${pointName(state.a)}`);
  });
  $('undo-btn').addEventListener('click', () => startWrite('undo', {}, 'Undo the last restore'));
  $('label-form').addEventListener('submit', submitLabelForm);
  wireCheckpointDialog();
  $('plan-confirm').addEventListener('click', confirmPlan);
  $('plan-cancel').addEventListener('click', closePlan);
  document.addEventListener('keydown', (ev) => {
    const typing = ev.target instanceof HTMLInputElement && ev.target.type !== 'checkbox';
    if (!$('plan-dialog').hidden) { if (ev.key === 'Escape') closePlan(); return; }
    if (!$('checkpoint-dialog').hidden) { if (ev.key === 'Escape') closeCheckpointDialog(); return; }
    if (typing) { if (ev.key === 'Escape') ev.target.blur(); return; }
    if (ev.key === 'j' || ev.key === 'ArrowDown') { ev.preventDefault(); openFile(state.fileIndex + 1); }
    else if (ev.key === 'k' || ev.key === 'ArrowUp') { ev.preventDefault(); openFile(state.fileIndex - 1); }
    else if (ev.key === 's') { $('split-toggle').checked = !state.split; state.split = !state.split; openFile(state.fileIndex); }
    else if (ev.key === 'h') loadHistory();
    else if (ev.key === 'b') loadBlame();
    else if (ev.key === '/') { ev.preventDefault(); $('search').focus(); }
  });
}

async function main() {
  wire();
  try {
    await loadSessions();
    await loadTimeline();
    await setPoints(state.initial, '@working');
    await loadProtection();
    document.body.dataset.ready = 'true';
  } catch (e) { showError(e); }
  listen();
}

main();
