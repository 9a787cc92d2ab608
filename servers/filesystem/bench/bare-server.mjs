#!/usr/bin/env node
// The baseline for the small-reads figure: the least an MCP server can do to return a file's text
// (the official SDK's McpServer, one tool, fs.readFile, no checks at all). Not for real use.
import { readFile } from 'node:fs/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'bare-readfile', version: '0.0.0' });
server.registerTool('read_text_file', { inputSchema: { path: z.string() } }, async ({ path }) => ({
  content: [{ type: 'text', text: await readFile(path, 'utf8') }],
}));
await server.connect(new StdioServerTransport());
