#!/usr/bin/env node
// Run after `npm install` here, before committing package-lock.json.
//
// The registry this project's machines reach serves only some of the agents'
// platform packages (linux-x64, and not every version of those). `npm install`
// then leaves the others out of the lock, and `npm ci` refuses that lock
// ("Missing: opencode-darwin-arm64@ from lock file"). This adds, for every
// optional dependency the lock lacks, an entry with its version and the
// os/cpu/libc its name says (darwin/linux/win32|windows, arm64/x64,
// musl/gnu), so that `npm ci` sees the lock in sync and skips the packages
// of other platforms. One of this platform that the registry lacks
// (e.g. `@kilocode/cli-linux-x64-baseline` 7.7.7) is a failed optional
// install, which npm tolerates.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const file = path.join(HERE, 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));

function platformOf(name) {
  const n = name.toLowerCase();
  const os = /darwin/.test(n) ? 'darwin' : /win32|windows/.test(n) ? 'win32' : /linux/.test(n) ? 'linux' : null;
  const cpu = /arm64/.test(n) ? 'arm64' : /x64/.test(n) ? 'x64' : null;
  const libc = /musl/.test(n) ? 'musl' : /-gnu/.test(n) && os === 'linux' ? 'glibc' : null;
  return { os, cpu, libc };
}

let added = 0;
for (const [where, pkg] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies || {})) {
    // Resolved as node does: beside the dependent, else at the top.
    const nested = `${where ? `${where}/` : ''}node_modules/${name}`;
    const top = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[top]) continue;
    const { os, cpu, libc } = platformOf(name);
    if (!os || !cpu) {
      console.error(`left out ${name}@${version} (needed by ${where || 'the root'}): no platform in its name`);
      continue;
    }
    lock.packages[top] = { version, optional: true, os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
    added++;
  }
}
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} platform entries to package-lock.json`);
