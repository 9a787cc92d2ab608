/**
 * Byte counts in messages: "512 bytes", "1.5 KiB", "10 MiB", "2.3 GiB" (binary units, at most one
 * decimal, none when it is zero). One spelling for every server, so the model meets one format.
 */
export function formatBytes(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (!Number.isFinite(bytes) || Math.abs(bytes) < 1024) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Number(value.toFixed(1))} ${units[unit]}`;
}

/**
 * A count with its noun in messages: "1 file", "2 files", "1 entry", "3 entries". The plural is the
 * noun with "s" unless given, so every server says "1 file" and never "1 files".
 */
export function countOf(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
