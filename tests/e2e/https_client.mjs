// The SDK client over HTTPS, run as a child of https.test.mjs so that
// NODE_EXTRA_CA_CERTS (read at start only) makes Node's fetch trust the
// test's self-signed certificate. Argument: the server's https:// URL.
// Prints one JSON line: the tool names and run_code's result text.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { newClient, runCode, textOf } from './helpers.mjs';

const client = newClient('airlock-https-e2e');
const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
await client.connect(transport);
const { tools } = await client.listTools();
const result = await runCode(client, { language: 'bash', code: 'echo "hello over https"' });
console.log(JSON.stringify({ tools: tools.map((t) => t.name), text: textOf(result), isError: !!result.isError }));
await client.close();
