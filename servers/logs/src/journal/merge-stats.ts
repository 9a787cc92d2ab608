import type { LevelKey, StatsResult } from '../scan-protocol.js';

/**
 * Statistics of files (from the scan worker) and of the journal (counted here) as one result:
 * counts add up, the timeline is kept in the wider of the two bucket widths (every width is a
 * multiple of the narrower ones, so buckets nest), top messages of the same pattern add up.
 */
export function mergeStats(a: StatsResult, b: StatsResult, topErrors: number): StatsResult {
  const bucketMs = Math.max(a.bucketMs, b.bucketMs);
  const timeline = new Map<number, Partial<Record<LevelKey, number>>>();
  for (const bucket of [...a.timeline, ...b.timeline]) {
    const start = Math.floor(bucket.start / bucketMs) * bucketMs;
    const counts = timeline.get(start) ?? {};
    for (const [level, n] of Object.entries(bucket.counts) as [LevelKey, number][]) counts[level] = (counts[level] ?? 0) + n;
    timeline.set(start, counts);
  }
  const levels: Partial<Record<LevelKey, number>> = { ...a.levels };
  for (const [level, n] of Object.entries(b.levels) as [LevelKey, number][]) levels[level] = (levels[level] ?? 0) + n;
  const patterns = new Map<string, StatsResult['topErrors'][number]>();
  for (const t of [...a.topErrors, ...b.topErrors]) {
    const seen = patterns.get(t.pattern);
    if (!seen) patterns.set(t.pattern, { ...t });
    else {
      seen.count += t.count;
      if (t.first !== undefined && (seen.first === undefined || t.first < seen.first)) seen.first = t.first;
      if (t.last !== undefined && (seen.last === undefined || t.last > seen.last)) seen.last = t.last;
    }
  }
  const min = (x: number | undefined, y: number | undefined): number | undefined => (x === undefined ? y : y === undefined ? x : Math.min(x, y));
  const max = (x: number | undefined, y: number | undefined): number | undefined => (x === undefined ? y : y === undefined ? x : Math.max(x, y));
  const first = min(a.first, b.first);
  const last = max(a.last, b.last);
  let groups: StatsResult['groups'];
  if (a.groups || b.groups) {
    const byValue = new Map<string, { value: string; count: number; errors: number }>();
    for (const g of [...(a.groups ?? []), ...(b.groups ?? [])]) {
      const seen = byValue.get(g.value);
      if (seen) {
        seen.count += g.count;
        seen.errors += g.errors;
      } else byValue.set(g.value, { ...g });
    }
    groups = [...byValue.values()].sort((x, y) => y.count - x.count || (x.value < y.value ? -1 : x.value > y.value ? 1 : 0)).slice(0, 50);
  }
  return {
    entries: a.entries + b.entries,
    continuationLines: a.continuationLines + b.continuationLines,
    levels,
    withoutTime: a.withoutTime + b.withoutTime,
    implausibleTimes: a.implausibleTimes + b.implausibleTimes,
    ...(first !== undefined ? { first } : {}),
    ...(last !== undefined ? { last } : {}),
    bucketMs,
    timeline: [...timeline.entries()].sort((x, y) => x[0] - y[0]).map(([start, counts]) => ({ start, counts })),
    topErrors: [...patterns.values()].sort((x, y) => y.count - x.count || (x.pattern < y.pattern ? -1 : 1)).slice(0, topErrors),
    distinctErrors: a.distinctErrors + b.distinctErrors,
    ...(groups ? { groups, distinctGroups: (a.distinctGroups ?? 0) + (b.distinctGroups ?? 0), groupsOther: (a.groupsOther ?? 0) + (b.groupsOther ?? 0) } : {}),
  };
}
