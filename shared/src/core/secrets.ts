/**
 * Values that must never leave the process in a log line or an error message: tokens, passwords.
 *
 * Two lifetimes: process secrets (a password from the command line, the operator's token) live as
 * long as the process; session secrets (a bearer token a remote client brought) are held by that
 * session's scope and forgotten with it, so one session's token is never needed, kept or matched
 * after it ends, and never redacted into (or leaked out of) another session's text.
 */

/** Shown in place of a secret. */
export const REDACTED = '[redacted]';

/** Shorter values are refused: redacting them would mangle ordinary text. */
const MIN_SECRET_LENGTH = 4;

/**
 * Credentials recognisable by their shape, redacted even when nobody registered them: the password
 * part of a URL, `password=...` in a connection string, a bearer token in a header, and GitHub's
 * token formats.
 *
 * The URL pattern's parts are bounded (a scheme of 32 characters, a user name of 256, a password of
 * 1024): unbounded, a long run of letters made it backtrack quadratically (60,000 characters took
 * 7 s), and error messages repeat what clients send.
 */
const PATTERNS: [RegExp, string][] = [
  [/([a-z][a-z0-9+.-]{0,31}:\/\/[^:/@\s]{0,256}):[^@\s]{0,1024}@/gi, `$1:${REDACTED}@`],
  [/(password\s*=\s*)('[^']*'|[^\s;]+)/gi, `$1${REDACTED}`],
  [/(\bBearer\s+)[A-Za-z0-9._~+/=-]{8,}/g, `$1${REDACTED}`],
  [/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b/g, REDACTED],
];

export class SecretScope {
  private readonly values = new Set<string>();

  /** @param parent a wider scope whose secrets are redacted too (a session's parent is the process). */
  constructor(private readonly parent?: SecretScope) {}

  add(value: string | undefined): void {
    if (value && value.length >= MIN_SECRET_LENGTH) this.values.add(value);
  }

  /** Forgets everything this scope holds (the parent's secrets stay). */
  clear(): void {
    this.values.clear();
  }

  get size(): number {
    return this.values.size;
  }

  redact(text: string): string {
    let out = this.parent ? this.parent.redact(text) : redactPatterns(text);
    // Longest first: a secret that contains another is replaced whole.
    for (const secret of [...this.values].sort((a, b) => b.length - a.length)) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  }
}

function redactPatterns(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** The process-wide scope; every session scope has it as parent. */
export const processSecrets = new SecretScope();

/** Registers a process-lifetime secret (a database password, the operator's token). */
export function registerSecret(value: string | undefined): void {
  processSecrets.add(value);
}

/** Redacts process secrets and credential shapes. Session code uses its scope's `redact` instead. */
export function redactSecrets(text: string): string {
  return processSecrets.redact(text);
}
