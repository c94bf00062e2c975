// Guard: package.json's `test` script lists the test files explicitly (the
// order matters, and --test-concurrency=1), so a new *.test.mjs that is not
// added there would silently never run in CI. This fails when one is missing
// or when the script names a file that does not exist.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';

import { E2E_DIR } from './helpers.mjs';

it('every tests/e2e/*.test.mjs is listed in package.json scripts.test, and nothing else', () => {
  const script = JSON.parse(readFileSync(path.join(E2E_DIR, 'package.json'), 'utf8')).scripts.test;
  const listed = script.split(/\s+/).filter((w) => w.endsWith('.test.mjs'));
  const onDisk = readdirSync(E2E_DIR).filter((f) => f.endsWith('.test.mjs'));
  assert.deepEqual(onDisk.filter((f) => !listed.includes(f)), [], 'test files missing from scripts.test');
  assert.deepEqual(listed.filter((f) => !onDisk.includes(f)), [], 'scripts.test names files that do not exist');
  assert.equal(new Set(listed).size, listed.length, 'a file listed twice');
});
