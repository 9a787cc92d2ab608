/**
 * Turns a message into the pattern similar messages share, so that "user 42 timed out after
 * 3000 ms" and "user 7 timed out after 1500 ms" count as one error: UUIDs, IP addresses, hex ids,
 * mixed letter-and-digit ids, and numbers become placeholders. A leaf module (the worker uses it).
 */

const MAX_PATTERN = 300;

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g;
const HEX = /\b(?:0x[0-9a-f]+|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,})\b/gi;
/** A word of letters and digits mixed (req7f3a9c, user42x): an id, whatever its shape. */
const MIXED_ID = /\b(?=[A-Za-z_-]*\d)(?=\d*[A-Za-z])[A-Za-z0-9_-]{6,}\b/g;
const NUMBER = /\d+(?:\.\d+)?/g;
const SPACES = /\s+/g;

export function normalizeMessage(message: string): string {
  return message
    .slice(0, 2 * MAX_PATTERN)
    .replace(UUID, '<uuid>')
    .replace(IPV4, '<ip>')
    .replace(HEX, '<hex>')
    .replace(MIXED_ID, '<id>')
    .replace(NUMBER, '<n>')
    .replace(SPACES, ' ')
    .trim()
    .slice(0, MAX_PATTERN);
}
