// The baseline for bench.mjs: a bare SDK server whose read_query calls better-sqlite3 directly on
// the main thread, with no validation, caps, worker or output schema (what a minimal port of the
// official server does).
import Database from 'better-sqlite3';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const db = new Database(process.argv[2], { readonly: true, fileMustExist: true });
const server = new Server({ name: 'bare-sqlite', version: '0.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'read_query', description: 'Run a SELECT', inputSchema: { type: 'object', properties: { sql: { type: 'string' }, params: { type: 'array' } }, required: ['sql'] } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { sql, params = [] } = request.params.arguments ?? {};
  try {
    const rows = db.prepare(sql).all(...params);
    return { content: [{ type: 'text', text: JSON.stringify(rows) }] };
  } catch (error) {
    return { content: [{ type: 'text', text: String(error) }], isError: true };
  }
});
await server.connect(new StdioServerTransport());
