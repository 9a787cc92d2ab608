import type { ChangeSource } from '@suite/shared';

/**
 * What a schema or table subscription follows: the database file and, because a WAL-mode database
 * takes its changes in "<file>-wal" until a checkpoint, that file too. The -wal file is followed
 * whether or not it exists yet: a database can be switched to WAL by another process after the
 * subscription, and its changes must not wait for a checkpoint to be heard of.
 */
export function databaseChangeSource(file: string): ChangeSource {
  return { paths: [file, `${file}-wal`] };
}
