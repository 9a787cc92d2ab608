import { describe, expect, it } from 'vitest';
import { redactSecrets, registerSecret } from '@suite/shared';
import { leastPrivilegeSql } from '../src/privileges.js';
import { parseArrayLiteral, parserFor } from '../src/values.js';

describe('value conversion', () => {
  it('turns timestamps into ISO 8601 with their offset', () => {
    const tz = parserFor(1184);
    expect(tz('2024-05-01 12:00:00+00')).toBe('2024-05-01T12:00:00Z');
    expect(tz('2024-05-01 12:00:00.123456+05:30')).toBe('2024-05-01T12:00:00.123456+05:30');
    expect(tz('2024-05-01 12:00:00-08')).toBe('2024-05-01T12:00:00-08:00');
    expect(tz('infinity')).toBe('infinity');
    expect(tz('0044-03-15 12:00:00+00 BC')).toBe('0044-03-15 12:00:00+00 BC');
  });

  it('parses nested, quoted and NULL array elements', () => {
    expect(parseArrayLiteral('{{1,2},{3,NULL}}', Number)).toEqual([
      [1, 2],
      [3, null],
    ]);
    expect(parseArrayLiteral('{"a,b","say \\"hi\\"","back\\\\slash",NULL,"NULL"}', (s) => s)).toEqual(['a,b', 'say "hi"', 'back\\slash', null, 'NULL']);
    expect(parseArrayLiteral('[0:1]={7,8}', Number)).toEqual([7, 8]);
    expect(parseArrayLiteral('{}', Number)).toEqual([]);
    expect(parserFor(1001)('{"\\\\x6869"}')).toEqual([Buffer.from('hi').toString('base64')]);
    expect(parserFor(3807)('{"{\\"a\\": 1}"}')).toEqual([{ a: 1 }]);
  });
});

describe('secrets', () => {
  it('redacts passwords in URLs and key=value strings', () => {
    expect(redactSecrets('failed for postgresql://bob:s3cret@db/x')).toBe('failed for postgresql://bob:[redacted]@db/x');
    expect(redactSecrets('host=db password=s3cret user=bob')).toBe('host=db password=[redacted] user=bob');
    registerSecret('hunter22');
    expect(redactSecrets('it was hunter22 all along')).toBe('it was [redacted] all along');
  });

  it('quotes identifiers in the least-privilege SQL', () => {
    expect(leastPrivilegeSql('my "db"', 150000)).toContain('GRANT CONNECT ON DATABASE "my ""db""" TO "mcp_readonly";');
    expect(leastPrivilegeSql('shop', 130000)).toContain('GRANT SELECT ON ALL TABLES IN SCHEMA public TO "mcp_readonly";');
  });
});
