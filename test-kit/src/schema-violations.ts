/**
 * Values a JSON Schema certainly rejects: another JSON type, a crossed bound, a value outside its
 * enum. Used by the abuse kit (one wrong call per tool) and by the fuzzer's mutations.
 */

export type JsonSchema = Record<string, unknown>;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** The JSON type names a value satisfies. */
export function jsonTypesOf(value: unknown): string[] {
  if (value === null) return ['null'];
  if (Array.isArray(value)) return ['array'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['number', 'integer'] : ['number'];
  return [typeof value];
}

export function typesOf(schema: JsonSchema): string[] | undefined {
  const type = schema.type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return undefined;
}

/** A finite number, or undefined. */
export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A value as a (sub)schema when it is an object. */
export function schemaAt(value: unknown): JsonSchema | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonSchema) : undefined;
}

/** Values that a property's schema certainly rejects, with why: another JSON type, a crossed bound, a value outside the enum. */
export function violationsOf(schema: JsonSchema): [unknown, string][] {
  // Alternatives (anyOf) and untyped schemas accept too much to be sure of a rejection.
  if (schema.anyOf || schema.oneOf || schema.allOf || schema.$ref) return [];
  const out: [unknown, string][] = [];
  const types = typesOf(schema);
  if (types) {
    const accepts = (value: unknown): boolean => jsonTypesOf(value).some((t) => types.includes(t)) || (schema.nullable === true && value === null);
    for (const candidate of ['not a number', 1.5, 12345, true, null, [1, 'two'], { nested: { deep: true } }]) {
      if (!accepts(candidate)) out.push([candidate, `given ${JSON.stringify(candidate)} (${jsonTypesOf(candidate)[0]}), not ${types.join(' or ')}`]);
    }
  }
  const only = types?.length === 1 ? types[0] : undefined;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) out.push(['\u0000not-one-of-the-enum', 'outside its enum']);
  if (only === 'string') {
    const max = num(schema.maxLength);
    const min = num(schema.minLength);
    if (max !== undefined && max < 1_000_000) out.push(['a'.repeat(max + 1), `one character over maxLength ${max}`]);
    if (min !== undefined && min > 0) out.push(['a'.repeat(min - 1), `one character under minLength ${min}`]);
  }
  if (only === 'integer' || only === 'number') {
    const max = num(schema.maximum);
    const min = num(schema.minimum);
    if (max !== undefined && max < MAX_SAFE) out.push([max + 1, `over maximum ${max}`]);
    if (min !== undefined && min > -MAX_SAFE) out.push([min - 1, `under minimum ${min}`]);
    if (only === 'integer') out.push([0.5, 'not an integer']);
  }
  if (only === 'array') {
    const max = num(schema.maxItems);
    const min = num(schema.minItems);
    const item = schemaAt(schema.items);
    const filler = item && typesOf(item)?.includes('string') ? 'x' : item && typesOf(item)?.includes('integer') ? 1 : undefined;
    if (max !== undefined && max < 1000 && filler !== undefined) out.push([Array.from({ length: max + 1 }, () => filler), `one item over maxItems ${max}`]);
    if (min !== undefined && min > 0) out.push([[], `fewer than minItems ${min}`]);
  }
  return out;
}
