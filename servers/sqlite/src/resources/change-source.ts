import { watch } from 'node:fs';
import path from 'node:path';
import type { ChangeSource } from '@suite/shared';
import type { SqliteConfig } from '../config.js';

/**
 * What a schema or table subscription watches: the database file itself (through the shared
 * watcher) and, because a WAL-mode database takes its changes in "<file>-wal" until a
 * checkpoint, that file too, which may appear and disappear as connections come and go.
 */
export function databaseChangeSource(config: SqliteConfig, uri: string): ChangeSource {
  const file = config.database.file;
  const walName = `${path.basename(file)}-wal`;
  let watcher: ReturnType<typeof watch> | undefined;
  try {
    watcher = watch(path.dirname(file), { persistent: false }, (_event, name) => {
      if (name === walName) config.changes?.publish(uri);
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    // Without a directory watch, changes still arrive once they reach the main file.
    watcher = undefined;
  }
  return { path: file, dispose: () => watcher?.close() };
}
