// What every browser test file starts the same way: `rewind ui` on a free
// port (its URL read from the first line it prints) and the system's
// headless Chromium (playwright-core never downloads one). Outside test/,
// so that `node --test test/` does not take it for a test file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

/** `rewind ui ARGS --no-open --port 0`: the server, its URL, origin and secret. */
export async function startUi(bin, args, env) {
  const server = spawn(bin, ['ui', ...args, '--no-open', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    server.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(buf.slice(0, nl).trim());
    });
    server.on('exit', (code) => reject(new Error(`rewind ui exited ${code}`)));
    setTimeout(() => reject(new Error('no URL printed')), 20000);
  });
  const u = new URL(url);
  return { server, url, origin: u.origin, secret: u.searchParams.get('token') };
}

/** Headless Chromium with a fresh profile (`profilePrefix` names its temp dir). */
export function launchChromium(profilePrefix, viewport) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), profilePrefix));
  return chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * `rewind ui ARGS` and a page of it in Chromium: { server, url, origin,
 * secret, context, page }. `prepare(ui)` runs before the page loads (to
 * grant permissions, watch requests); a page error fails the test. With
 * `goto: false` the page is left blank.
 */
export async function openUi(bin, args, env, { profile, viewport, prepare, goto = true }) {
  const ui = await startUi(bin, args, env);
  ui.context = await launchChromium(profile, viewport);
  ui.page = ui.context.pages()[0] || await ui.context.newPage();
  if (prepare) await prepare(ui);
  ui.page.on('pageerror', (e) => { throw e; });
  if (goto) {
    await ui.page.goto(ui.url);
    await ui.page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  }
  return ui;
}

/** Stops what `openUi` started and removes the test's directory `tmp`. */
export async function closeUi(ui, tmp) {
  if (ui?.context) await ui.context.close();
  if (ui?.server) ui.server.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
}

/** The session's checkpoints (`list_checkpoints`, scope all) through the page's API. */
export async function listCheckpoints(ui) {
  const r = await fetch(new URL('/api/rpc', ui.origin), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-rewind-token': ui.secret },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'list_checkpoints', params: { scope: 'all' } }),
  });
  if (r.status !== 200) throw new Error(`list_checkpoints: HTTP ${r.status}`);
  return (await r.json()).result.checkpoints;
}
