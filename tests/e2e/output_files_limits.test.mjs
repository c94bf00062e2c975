// Output files through the whole path (init in the jail -> runner -> server
// -> JSON reply): the sparse-file attack is capped in total and flagged, the
// server's memory stays bounded, and files nobody asked for are reported.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { connectStdio, runCode } from './helpers.mjs';

// The server's resident set (the process the SDK spawned).
function rssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = status.match(/^VmRSS:\s+(\d+) kB/m);
  return m ? Number(m[1]) * 1024 : 0;
}

describe('output files: total cap and hints', () => {
  let conn, dir;
  // A total cap below one file's size: every sparse file is left out unread.
  // (Multi-MiB replies are kept out of this test: the reply size is asserted.)
  const TOTAL = 512 * 1024;
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'airlock-outfiles-'));
    const config = path.join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ limits: { max_output_files_total_bytes: TOTAL } }));
    conn = await connectStdio({ args: ['--config', config] });
  });
  after(async () => {
    await conn?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('four sparse 8 MiB files: a bounded reply, files_truncated, the server does not grow', async () => {
    const code = "for i in range(4):\n    open(f'f{i}.bin', 'wb').truncate(8 << 20)\nprint('made')\n";
    const pid = conn.transport.pid;
    assert.ok(pid, 'the server pid');
    // Warm up once (allocator arenas, caches), then measure three attacks.
    await runCode(conn.client, { language: 'python', code: 'print(1)', timeout_ms: 30000 });
    const before = rssBytes(pid);
    for (let i = 0; i < 3; i++) {
      const r = await runCode(conn.client, { language: 'python', code, output_files: ['*.bin'], timeout_ms: 30000 });
      const sc = r.structuredContent;
      assert.equal(sc.status, 'ok', JSON.stringify(sc).slice(0, 500));
      const bytes = JSON.stringify(r).length;
      assert.ok(bytes < 4 * TOTAL, `reply of ${bytes} bytes (before the cap: ~85 MiB)`);
      assert.equal(sc.files_truncated, true);
      assert.deepEqual(sc.files, [], 'no 8 MiB file fits in 512 KiB');
      assert.equal(sc.files_skipped.length, 4, JSON.stringify(sc.files_skipped));
      for (const s of sc.files_skipped) assert.equal(s.reason, 'max_output_files_total_bytes');
      assert.ok(sc.notes.some((n) => n.includes('files_skipped')), JSON.stringify(sc.notes));
    }
    const grown = rssBytes(pid) - before;
    assert.ok(grown < 100 << 20, `the server grew by ${(grown / 1048576).toFixed(1)} MiB`);
  });

  it('a file written without output_files, and a pattern that matches nothing, are reported', async () => {
    const r = await runCode(conn.client, {
      language: 'python',
      code: "open('plot.png', 'wb').write(b'0' * 100)\n",
      output_files: ['*.csv'],
      timeout_ms: 30000,
    });
    const sc = r.structuredContent;
    assert.equal(sc.status, 'ok');
    assert.deepEqual(sc.files, []);
    assert.deepEqual(sc.files_left.map((f) => [f.name, f.size]), [['plot.png', 100]]);
    assert.ok(sc.notes.some((n) => n.includes('"*.csv" matched no file')), JSON.stringify(sc.notes));
    const text = r.content.find((c) => c.type === 'text').text;
    assert.match(text, /not requested: plot\.png/);
  });
});

// The official SDK's stdio transport drops the connection on a message over
// 10 MiB; file bytes appear twice in a result. With the in-jail total cap
// raised, the reply budget (9 MiB) keeps the result readable by the SDK.
describe('output files: the reply stays under the SDK stdio limit', () => {
  let conn, dir;
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'airlock-outfiles-'));
    const config = path.join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ limits: { max_output_files_total_bytes: 8 << 20 } }));
    conn = await connectStdio({ args: ['--config', config] });
  });
  after(async () => {
    await conn?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('four 1.5 MiB random files: the connection holds, the files that do not fit are named', async () => {
    const code = "import os\nfor i in range(4):\n    open(f'f{i}.bin', 'wb').write(os.urandom(1536 * 1024))\n";
    const r = await runCode(conn.client, { language: 'python', code, output_files: ['*.bin'], timeout_ms: 30000 });
    const sc = r.structuredContent;
    assert.equal(sc.status, 'ok', JSON.stringify(sc).slice(0, 500));
    const bytes = JSON.stringify(r).length;
    assert.ok(bytes <= 9 << 20, `reply of ${bytes} bytes`);
    assert.ok(sc.files.length >= 1, 'at least one file fits');
    assert.equal(sc.files.length + sc.files_skipped.length, 4);
    assert.ok(sc.files_skipped.length >= 1, 'four 1.5 MiB files (~16 MiB in the reply) cannot all fit');
    for (const s of sc.files_skipped) assert.equal(s.reason, 'max_reply_bytes');
    assert.equal(sc.files_truncated, true);
    // The connection still works.
    const again = await runCode(conn.client, { language: 'bash', code: 'echo still-here', timeout_ms: 30000 });
    assert.equal(again.structuredContent.stdout, 'still-here\n');
  });
});
