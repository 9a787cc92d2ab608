/**
 * fast-check arbitraries from a tool's JSON Schema: values the schema accepts, biased toward the
 * inputs that break servers (boundary lengths and numbers, astral and combining characters, RTL
 * overrides, NUL, path traversal, option-like strings), and mutations the schema rejects (a required
 * field missing, a wrong type, a bound crossed, an extra field where none is allowed).
 *
 * Covers what zod's JSON Schema output uses: type (one or a list), properties, required,
 * additionalProperties, propertyNames, items, minItems, maxItems, uniqueItems, enum, const,
 * minLength, maxLength, pattern, format, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
 * anyOf, oneOf, allOf (objects merged), nullable, default, and local $ref.
 */
import fc from 'fast-check';
import { jsonTypesOf, num, schemaAt, typesOf, violationsOf, type JsonSchema } from './schema-violations.js';

export type { JsonSchema };

export interface SchemaArbitraryOptions {
  /** Strings of the server's world (fixture names, paths inside the sandbox) mixed into generated strings. */
  samples?: readonly string[];
  /** The most items of a generated array or keys of a generated map (default 4). */
  maxItems?: number;
  /** A path that must never come into being: used in option-like strings (`--output=<canary>`). */
  canary?: string;
  /**
   * Values of the server's world by argument name (`owner: ['acme']`, `issue_number: [1, 2]`), used
   * often for an argument of that name (at any depth) whose schema they fit: what gets a call past
   * "not found" to the code behind it.
   */
  namedSamples?: Readonly<Record<string, readonly unknown[]>>;
}

/** One generated call: its arguments and whether the schema accepts them. */
export interface FuzzCase {
  args: Record<string, unknown>;
  /** Undefined when the schema accepts the arguments; else what was done to make it reject them. */
  violation?: string;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Longest string generated on purpose; bounds above it are only reached by the boundary cases. */
const LONG = 4097;

/** Strings that have broken servers: traversal, absolute and device paths, NUL, option injection, odd Unicode. */
export function hostileStrings(canary = '/tmp/suite-fuzz-canary'): string[] {
  return [
    '', ' ', '.', '..', '../', '../..', '../../etc/passwd', '../../../../../../../../etc/shadow', 'a/../../..', './../x',
    '/', '/etc/passwd', '/etc', '/proc/self/environ', '/proc/self/cwd', '/dev/zero', '/dev/stdin', '/root', '/tmp',
    '~', '~/.ssh/id_rsa', '~root', '$HOME', '%2e%2e%2fetc%2fpasswd', '..%2F..%2Fetc', 'file:///etc/passwd', 'file://localhost/etc/hosts',
    'C:\\Windows\\System32', '\\\\server\\share\\x', 'a\\..\\..\\b',
    '\u0000', 'a\u0000b', 'ok.txt\u0000.png', 'line\nbreak', 'carriage\rreturn', '\t', ' leading', 'trailing ', '"quoted"', "'single'",
    '-', '--', '-h', '--help', '--version', `--output=${canary}`, `-o${canary}`, `--upload-pack=touch ${canary}`, `--exec=touch ${canary}`, '-rf', '--all',
    `$(touch ${canary})`, '`id`', '; id', '| id', '&& id', '${IFS}', '%s%n%x', '{{7*7}}', '${jndi:ldap://127.0.0.1/x}',
    '*', '**', '**/*', '?', '[', ']', '[!a]', '{a,b}', '(', ')', '(a+)+$', '(.*)*', '\\', '^', '$', '.*',
    'e\u0301\u0301\u0301\u0301', '\u202Egnp.exe', '\u200F\u05E9\u05DC\u05D5\u05DD', 'مرحبا', '\u200B', '\uFEFF', '\uFFFD', '\uD800', '\uDC00x',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '😀', '👩‍👩‍👧‍👦', '\u{10FFFF}', '\u0007\u001b[31mred\u001b[0m',
    'a'.repeat(255), 'a'.repeat(256), 'a'.repeat(LONG), 'x/'.repeat(600), `${'/a'.repeat(300)}`,
    'null', 'undefined', 'NaN', 'true', '0', '-1', '1e308', '{}', '[]', '{"a":1}',
    "'; DROP TABLE users; --", "' OR '1'='1", 'SELECT 1', 'SELECT * FROM sqlite_master', 'PRAGMA writable_schema=1', `ATTACH DATABASE '${canary}' AS x`, `VACUUM INTO '${canary}'`, `COPY (SELECT 1) TO '${canary}'`,
    '<script>alert(1)</script>', '<!-- x -->', 'CON', 'nul', 'aux.txt', '.git', '.git/config', '.git/hooks/pre-commit', '.env', 'HEAD', 'HEAD~1', '@{-1}', 'refs/heads/main', 'main..feature',
  ];
}

/** Fits a string into [min, max] UTF-16 units (zod's measure, which is never looser than JSON Schema's code points). */
function fitLength(text: string, min: number, max: number): string {
  let out = text.length > max ? text.slice(0, max) : text;
  if (out.length < min) out += 'a'.repeat(min - out.length);
  return out;
}

class Builder {
  private readonly samples: readonly string[];
  private readonly maxItems: number;
  private readonly hostile: string[];
  private readonly named: Readonly<Record<string, readonly unknown[]>>;

  constructor(
    private readonly root: JsonSchema,
    options: SchemaArbitraryOptions,
  ) {
    this.samples = options.samples ?? [];
    this.named = options.namedSamples ?? {};
    this.maxItems = options.maxItems ?? 4;
    this.hostile = hostileStrings(options.canary);
  }

  resolve(schema: JsonSchema, depth: number): JsonSchema {
    const ref = schema.$ref;
    if (typeof ref !== 'string' || depth > 8) return schema;
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
    const defs = match ? schemaAt(this.root[match[1]!]) : undefined;
    const target = match && defs ? schemaAt(defs[decodeURIComponent(match[2]!)]) : ref === '#' ? this.root : undefined;
    return target ? this.resolve(target, depth + 1) : {};
  }

  /** Values the schema accepts; `name` is the argument's (or the enclosing array's) name, for named samples. */
  valid(input: JsonSchema, depth = 0, name?: string): fc.Arbitrary<unknown> {
    const schema = this.resolve(input, depth);
    const generated = this.validIgnoringDefault(schema, depth, name);
    const options: fc.WeightedArbitrary<unknown>[] = [{ weight: 5, arbitrary: generated }];
    // The default is a value the server was written for: worth trying as it is.
    if ('default' in schema) options.push({ weight: 1, arbitrary: fc.constant(schema.default) });
    const fitting = name === undefined ? [] : (this.named[name] ?? []).filter((value) => fitsSchema(schema, value));
    if (fitting.length > 0) options.push({ weight: 10, arbitrary: fc.constantFrom(...fitting) });
    return options.length === 1 ? generated : fc.oneof(...options);
  }

  private validIgnoringDefault(schema: JsonSchema, depth: number, name: string | undefined): fc.Arbitrary<unknown> {
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
    const branches = (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined)?.map(schemaAt).filter((s): s is JsonSchema => s !== undefined);
    if (branches && branches.length > 0) {
      const options = branches.map((branch) => this.valid(branch, depth + 1, name));
      return schema.nullable === true ? fc.oneof(...options, fc.constant(null)) : fc.oneof(...options);
    }
    if (Array.isArray(schema.allOf)) {
      const merged = mergeAll(schema.allOf.map(schemaAt).filter((s): s is JsonSchema => s !== undefined));
      return this.valid({ ...schema, allOf: undefined, ...merged }, depth + 1, name);
    }
    const types = typesOf(schema) ?? inferTypes(schema);
    const options = types.map((type) => this.ofType(type, schema, depth, name));
    if (schema.nullable === true && !types.includes('null')) options.push(fc.constant(null));
    if (options.length === 0) return this.anyJson(depth);
    return options.length === 1 ? options[0]! : fc.oneof(...options);
  }

  private ofType(type: string, schema: JsonSchema, depth: number, name: string | undefined): fc.Arbitrary<unknown> {
    switch (type) {
      case 'string':
        return this.string(schema);
      case 'integer':
        return integer(schema);
      case 'number':
        return number(schema);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return this.array(schema, depth, name);
      case 'object':
        return this.object(schema, depth);
      default:
        return this.anyJson(depth);
    }
  }

  /** Any JSON value, small, with the hostile strings in it. */
  anyJson(depth: number): fc.Arbitrary<unknown> {
    const leaf = fc.oneof(this.plainString(0, 64), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
    if (depth > 3) return leaf;
    return fc.oneof(
      { weight: 4, arbitrary: leaf },
      { weight: 1, arbitrary: fc.array(leaf, { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.dictionary(this.plainString(0, 16), leaf, { maxKeys: 3 }) },
    );
  }

  /** Strings of any content within a length range, biased toward the hostile ones and the samples. */
  private plainString(min: number, max: number): fc.Arbitrary<string> {
    const span = Math.min(max, Math.max(min, 40));
    const options: fc.WeightedArbitrary<string>[] = [
      { weight: 3, arbitrary: fc.string({ unit: 'grapheme', minLength: Math.min(min, span), maxLength: span }) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: Math.min(min, span), maxLength: span }) },
      { weight: 4, arbitrary: fc.constantFrom(...this.hostile) },
    ];
    if (this.samples.length > 0) {
      options.push({ weight: 4, arbitrary: fc.constantFrom(...this.samples) });
      // A real name with something hostile around it: what gets past a first check.
      options.push({
        weight: 2,
        arbitrary: fc.tuple(fc.constantFrom(...this.samples), fc.constantFrom(...this.hostile), fc.constantFrom('/', '', ' ', '\u0000', '/../')).map(([s, h, sep]) => `${s}${sep}${h}`),
      });
    }
    // The exact bounds, where off-by-one errors live.
    const bounds = [min, max, min + 1, max - 1].filter((n) => n >= min && n <= max && n <= 1_000_000);
    if (bounds.length > 0) options.push({ weight: 1, arbitrary: fc.tuple(fc.constantFrom(...bounds), fc.constantFrom('a', 'é', '𝔘', '\u0000', '/')).map(([n, c]) => c.repeat(Math.ceil(n / c.length)).slice(0, n)) });
    return fc.oneof(...options).map((text) => fitLength(text, min, max));
  }

  private string(schema: JsonSchema): fc.Arbitrary<string> {
    const min = Math.max(0, num(schema.minLength) ?? 0);
    const max = Math.max(min, num(schema.maxLength) ?? Math.max(LONG, min));
    const fits = (text: string): boolean => text.length >= min && text.length <= max && [...text].length >= min;
    const format = typeof schema.format === 'string' ? formatArbitrary(schema.format) : undefined;
    if (typeof schema.pattern === 'string') {
      let regex: RegExp | undefined;
      try {
        regex = new RegExp(schema.pattern, 'u');
      } catch {
        regex = undefined;
      }
      if (regex) {
        const matching = regex;
        const known = [...this.hostile, ...this.samples].filter((s) => matching.test(s) && fits(s));
        const generated = fc.stringMatching(matching, { size: 'small', maxLength: Math.min(max, LONG) }).filter(fits);
        return known.length > 0 ? fc.oneof({ weight: 3, arbitrary: generated }, { weight: 1, arbitrary: fc.constantFrom(...known) }) : generated;
      }
    }
    if (format) return fc.oneof({ weight: 4, arbitrary: format.filter(fits) }, { weight: 1, arbitrary: this.plainString(min, max) });
    return this.plainString(min, max);
  }

  private array(schema: JsonSchema, depth: number, name: string | undefined): fc.Arbitrary<unknown[]> {
    const items = schemaAt(schema.items) ?? {};
    const minLength = Math.max(0, num(schema.minItems) ?? 0);
    const maxLength = Math.max(minLength, Math.min(num(schema.maxItems) ?? this.maxItems, Math.max(minLength, this.maxItems)));
    const item = this.valid(items, depth + 1, name);
    return schema.uniqueItems === true ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) }) : fc.array(item, { minLength, maxLength });
  }

  private object(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const properties = schemaAt(schema.properties) ?? {};
    const required = (Array.isArray(schema.required) ? schema.required : []).filter((k): k is string => typeof k === 'string');
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [key, value] of Object.entries(properties)) model[key] = this.valid(schemaAt(value) ?? {}, depth + 1, key);
    for (const key of required) model[key] ??= this.anyJson(depth + 1);
    const record = fc.record(model, { requiredKeys: required, noNullPrototype: true });
    const additional = schema.additionalProperties;
    const extra = additional === false ? undefined : schemaAt(additional);
    // Open maps (a JSON params object): keys of the allowed shape with values of the allowed schema.
    if (extra === undefined || (Object.keys(properties).length > 0 && Object.keys(extra).length === 0)) return record;
    const keys = schemaAt(schema.propertyNames);
    const keyArb = keys ? this.string({ type: 'string', ...keys }) : this.plainString(0, 32);
    const map = fc.dictionary(
      keyArb.filter((k) => !(k in properties)),
      this.valid(extra, depth + 1),
      { maxKeys: this.maxItems, noNullPrototype: true },
    );
    return fc.tuple(map, record).map(([m, r]) => ({ ...m, ...r }));
  }

  /** Arguments the schema rejects, each with what makes them wrong; undefined when no mutation is certain to be rejected. */
  invalid(schema: JsonSchema): fc.Arbitrary<FuzzCase> | undefined {
    const root = this.resolve(schema, 0);
    const properties = schemaAt(root.properties) ?? {};
    const required = (Array.isArray(root.required) ? root.required : []).filter((k): k is string => typeof k === 'string');
    const base = this.valid(root) as fc.Arbitrary<Record<string, unknown>>;
    const mutations: fc.Arbitrary<FuzzCase>[] = [];
    if (required.length > 0) {
      mutations.push(
        fc.tuple(base, fc.constantFrom(...required)).map(([args, key]) => {
          const { [key]: _dropped, ...rest } = args;
          return { args: rest, violation: `required "${key}" missing` };
        }),
      );
    }
    const wrongs: { key: string; value: unknown; why: string }[] = [];
    for (const [key, raw] of Object.entries(properties)) {
      const property = this.resolve(schemaAt(raw) ?? {}, 0);
      for (const [value, why] of violationsOf(property)) {
        // A top-level optional argument given as null counts as absent (runTool drops it), so it is valid.
        if (value === null && !required.includes(key)) continue;
        wrongs.push({ key, value, why: `"${key}" ${why}` });
      }
    }
    if (wrongs.length > 0) {
      mutations.push(fc.tuple(base, fc.constantFrom(...wrongs)).map(([args, wrong]) => ({ args: { ...args, [wrong.key]: wrong.value }, violation: wrong.why })));
    }
    if (root.additionalProperties === false) {
      mutations.push(
        fc.tuple(base, this.anyJson(1)).map(([args, value]) => ({ args: { ...args, __fuzz_extra__: value }, violation: 'an extra field where none is allowed' })),
      );
    }
    return mutations.length > 0 ? fc.oneof(...mutations) : undefined;
  }
}

/** Whether a known value fits a schema closely enough to be offered as an accepted one. */
function fitsSchema(schema: JsonSchema, value: unknown): boolean {
  if (Array.isArray(schema.enum)) return schema.enum.includes(value);
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches) return branches.some((branch) => fitsSchema(schemaAt(branch) ?? {}, value));
  const types = typesOf(schema);
  if (types && !jsonTypesOf(value).some((t) => types.includes(t))) return false;
  if (typeof value === 'string') {
    if (value.length < (num(schema.minLength) ?? 0) || value.length > (num(schema.maxLength) ?? Infinity)) return false;
    if (typeof schema.pattern === 'string') {
      try {
        return new RegExp(schema.pattern, 'u').test(value);
      } catch {
        return false;
      }
    }
  }
  if (typeof value === 'number') return value >= (num(schema.minimum) ?? -Infinity) && value <= (num(schema.maximum) ?? Infinity);
  return true;
}

function inferTypes(schema: JsonSchema): string[] {
  if (schema.properties || schema.additionalProperties !== undefined || schema.required) return ['object'];
  if (schema.items) return ['array'];
  if (schema.minLength !== undefined || schema.maxLength !== undefined || schema.pattern !== undefined || schema.format !== undefined) return ['string'];
  if (schema.minimum !== undefined || schema.maximum !== undefined) return ['number'];
  return [];
}

function mergeAll(parts: JsonSchema[]): JsonSchema {
  const merged: JsonSchema = {};
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) {
      if (key === 'properties') merged.properties = { ...(schemaAt(merged.properties) ?? {}), ...(schemaAt(value) ?? {}) };
      else if (key === 'required') merged.required = [...((merged.required as unknown[]) ?? []), ...(Array.isArray(value) ? value : [])];
      else merged[key] = value;
    }
  }
  return merged;
}

function formatArbitrary(format: string): fc.Arbitrary<string> | undefined {
  const dates = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true });
  switch (format) {
    case 'date-time':
      return dates.map((d) => d.toISOString());
    case 'date':
      return dates.map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress();
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'uuid':
      return fc.uuid();
    case 'ipv4':
      return fc.ipV4();
    case 'ipv6':
      return fc.ipV6();
    case 'base64':
      return fc.base64String({ maxLength: 64 });
    default:
      return undefined;
  }
}

function integer(schema: JsonSchema): fc.Arbitrary<number> {
  const exclusiveMin = num(schema.exclusiveMinimum);
  const exclusiveMax = num(schema.exclusiveMaximum);
  const min = Math.max(-MAX_SAFE, Math.ceil(num(schema.minimum) ?? (exclusiveMin !== undefined ? exclusiveMin + 1 : -MAX_SAFE)));
  const max = Math.min(MAX_SAFE, Math.floor(num(schema.maximum) ?? (exclusiveMax !== undefined ? exclusiveMax - 1 : MAX_SAFE)));
  if (min > max) return fc.constant(min);
  const edges = [min, max, min + 1, max - 1, 0, 1, -1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, -(2 ** 31), 1000, 10_000, 1_000_000].filter((n) => n >= min && n <= max);
  // Small values where the range has them; else values near its lower end.
  const small = min <= 1000 && max >= -1000 ? fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) }) : fc.integer({ min, max: Math.min(max, min + 1000) });
  return fc.oneof(
    { weight: 3, arbitrary: small },
    { weight: 2, arbitrary: fc.constantFrom(...edges) },
    { weight: 2, arbitrary: fc.bigInt(BigInt(min), BigInt(max)).map(Number) },
  );
}

function number(schema: JsonSchema): fc.Arbitrary<number> {
  const min = num(schema.minimum) ?? num(schema.exclusiveMinimum) ?? -Number.MAX_VALUE;
  const max = num(schema.maximum) ?? num(schema.exclusiveMaximum) ?? Number.MAX_VALUE;
  const allowed = (n: number): boolean =>
    n >= min && n <= max && (schema.exclusiveMinimum === undefined || n > (schema.exclusiveMinimum as number)) && (schema.exclusiveMaximum === undefined || n < (schema.exclusiveMaximum as number));
  const edges = [min, max, 0, -0, 0.1, -1.5, 1e-300, 5e-324, 1e21, 1e308, -1e308, MAX_SAFE + 2].filter(allowed);
  const doubles = fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).filter(allowed);
  return edges.length > 0 ? fc.oneof({ weight: 3, arbitrary: doubles }, { weight: 1, arbitrary: fc.constantFrom(...edges) }) : doubles;
}

/** Values a JSON Schema accepts, biased toward what breaks servers. */
export function arbitraryFromSchema(schema: JsonSchema, options: SchemaArbitraryOptions = {}): fc.Arbitrary<unknown> {
  return new Builder(schema, options).valid(schema);
}

/**
 * Tool arguments for a tool's input schema: mostly accepted ones, some rejected ones (each marked
 * with its violation), in the ratio 3 to 1.
 */
export function fuzzCases(inputSchema: JsonSchema, options: SchemaArbitraryOptions = {}): fc.Arbitrary<FuzzCase> {
  const builder = new Builder(inputSchema, options);
  const valid = builder.valid({ ...inputSchema, type: 'object' }).map((args): FuzzCase => ({ args: args as Record<string, unknown> }));
  // An unknown field is fine where the schema leaves the object open (zod strips it): an accepted case.
  const withExtra =
    inputSchema.additionalProperties === false
      ? undefined
      : fc.tuple(valid, builder.anyJson(1)).map(([c, value]): FuzzCase => ({ args: { ...c.args, __fuzz_extra__: value } }));
  const invalid = builder.invalid(inputSchema);
  const options_: fc.WeightedArbitrary<FuzzCase>[] = [{ weight: 6, arbitrary: valid }];
  if (withExtra) options_.push({ weight: 1, arbitrary: withExtra });
  if (invalid) options_.push({ weight: 2, arbitrary: invalid });
  return fc.oneof(...options_);
}
