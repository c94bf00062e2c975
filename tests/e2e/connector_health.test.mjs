// A connector (mcpServers entry) that cannot start: the agent is told which
// one and why (search_tools, describe_tool, execute), and /readyz follows
// server.readyz_requires_connectors. Also: the stdio config printed by
// `serve --http --config F` carries F as an absolute path.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { connectStdio, startHttpServer, textOf, waitFor } from './helpers.mjs';

let tmp;
function writeConfig(name, extra = {}) {
  const file = path.join(tmp, `${name}.json`);
  // `false` exits at once: the connector can never start.
  writeFileSync(file, JSON.stringify({ mcpServers: { broken: { command: 'false', trusted: true } }, ...extra }));
  return file;
}

before(() => { tmp = mkdtempSync(path.join(tmpdir(), 'airlock-e2e-connector-health-')); });
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

describe('a connector that fails to start', () => {
  it('search_tools, describe_tool and execute name it and its error', async () => {
    const conn = await connectStdio({ args: ['--config', writeConfig('stdio')] });
    try {
      const call = (name, args) => conn.client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
      const s = await call('search_tools', { query: '' });
      assert.notEqual(s.isError, true, JSON.stringify(s));
      assert.deepEqual(s.structuredContent.tools, []);
      const down = s.structuredContent.unavailable;
      assert.ok(Array.isArray(down) && down.length === 1, JSON.stringify(s.structuredContent));
      assert.equal(down[0].connector, 'broken');
      assert.ok(down[0].error.length > 0, 'the error says why');
      assert.match(textOf(s), /connector unavailable: broken \(/, textOf(s));

      const d = await call('describe_tool', { name: 'broken.anything' });
      assert.equal(d.isError, true);
      assert.match(textOf(d), /connector unavailable: broken \(/, textOf(d));

      const e = await call('execute', { language: 'javascript', code: 'return (await tools.search("")).tools.length;' });
      assert.equal(e.structuredContent.ok, true, JSON.stringify(e.structuredContent));
      assert.equal(e.structuredContent.result, 0);
      assert.equal(e.structuredContent.unavailable?.[0]?.connector, 'broken', JSON.stringify(e.structuredContent));
      assert.match(textOf(e), /connector unavailable: broken/);
    } finally {
      await conn.close();
    }
  });

  for (const requires of [false, true]) {
    it(`/readyz with server.readyz_requires_connectors: ${requires}`, async () => {
      const config = writeConfig(`http-${requires}`, { server: { readyz_requires_connectors: requires } });
      const server = await startHttpServer({ args: ['--config', config] });
      try {
        const base = new URL(server.url).origin;
        // Printed for stdio clients: this very config, by absolute path.
        assert.ok(await waitFor(() => server.stderr().includes(`"args":["serve","--config","${config}"]`), 10000),
          server.stderr());
        const metric = async (re) => re.exec(await (await fetch(`${base}/metrics`)).text())?.[1];
        // The runner is up and the connector's first attempt has failed.
        assert.ok(await waitFor(async () => (await metric(/^airlock_runner_up (\d)/m)) === '1', 30000), 'runner up');
        assert.ok(await waitFor(() => /connector broken: /.test(server.stderr()), 30000), server.stderr());
        assert.equal(await metric(/^airlock_connector_up\{connector="broken"\} (\d)/m), '0');
        // /readyz also waits for the warm pool (a jail ready, or none
        // pending): on a busy machine that can take a while after the
        // runner is up. Only then does the connector alone decide.
        assert.ok(await waitFor(async () => Number(await metric(/^airlock_pool_ready (\d+)/m)) > 0 ||
          (await metric(/^airlock_pool_pending (\d+)/m)) === '0', 30000), 'the warm pool settles');
        const ready = await fetch(`${base}/readyz`);
        assert.equal(ready.status, requires ? 503 : 200, await ready.text());
      } finally {
        await server.stop();
      }
    });
  }
});
