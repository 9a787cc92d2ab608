import { existsSync, watch } from 'node:fs';
import path from 'node:path';
import type { ChangeSource } from '@suite/shared';
import type { SqliteConfig } from '../config.js';

/**
 * What a schema or table subscription watches: the database file and, because a WAL-mode
 * database takes its changes in "<file>-wal" until a checkpoint, that file too.
 *
 * Both go to the shared watcher when the -wal file exists, which is the case for every WAL
 * database this server has open (its own connections keep the file there). The shared hub waits
 * until the watcher follows each path, and for a path that does not exist it waits its full
 * grace period, so a database without a -wal file (rollback journal, the common case) gives only
 * the main file to the hub; a directory watch then catches the -wal file should the database be
 * switched to WAL later, so that those changes are not held back until a checkpoint.
 */
export function databaseChangeSource(config: SqliteConfig, uri: string): ChangeSource {
  const file = config.database.file;
  const wal = `${file}-wal`;
  if (existsSync(wal)) return { paths: [file, wal] };
  const walName = path.basename(wal);
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
