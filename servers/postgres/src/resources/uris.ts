/**
 * Resource URIs: postgres://<host>:<port>/<database>/... with every name percent-encoded and no
 * user name (so URIs are stable across roles and never leak credentials).
 */
import type { DatabaseTarget } from '../database.js';

export function baseUri(target: DatabaseTarget): string {
  return `postgres://${encodeURIComponent(target.host)}:${target.port}/${encodeURIComponent(target.database)}`;
}

export function tableSchemaUri(target: DatabaseTarget, schema: string, table: string): string {
  return `${baseUri(target)}/tables/${encodeURIComponent(schema)}/${encodeURIComponent(table)}/schema`;
}

export function channelUri(target: DatabaseTarget, channel: string): string {
  return `${baseUri(target)}/channel/${encodeURIComponent(channel)}`;
}
