/**
 * Reads the bare keywords of one SQL statement, skipping comments, string literals and quoted
 * identifiers. It is not a parser: SQLite decides what a statement does (stmt.readonly,
 * stmt.reader); this only finds the statement kinds that are refused on principle in write mode
 * (ATTACH, VACUUM INTO) and gives clearer messages.
 */
export function bareWords(sql: string, limit = Infinity): string[] {
  const words: string[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n && words.length < limit) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      i = skipQuoted(sql, i, c);
    } else if (c === '[') {
      const end = sql.indexOf(']', i);
      i = end < 0 ? n : end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(sql[j]!)) j++;
      words.push(sql.slice(i, j).toUpperCase());
      i = j;
    } else {
      i++;
    }
  }
  return words;
}

function skipQuoted(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      // A doubled quote is an escaped quote inside the literal.
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i++;
    }
  }
  return sql.length;
}

export type StatementKind = 'attach' | 'vacuum-into' | 'other';

/** What a statement is, for the statement kinds that need an explicit flag. */
export function statementKind(sql: string): StatementKind {
  const words = bareWords(sql);
  const first = words[0];
  if (first === 'ATTACH' || first === 'DETACH') return 'attach';
  if (first === 'VACUUM' && words.includes('INTO')) return 'vacuum-into';
  return 'other';
}

/** True when the statement is CREATE [TEMP] TABLE (create_table accepts nothing else). */
export function isCreateTable(sql: string): boolean {
  const words = bareWords(sql, 3);
  if (words[0] !== 'CREATE') return false;
  return words[1] === 'TABLE' || ((words[1] === 'TEMP' || words[1] === 'TEMPORARY') && words[2] === 'TABLE');
}

/**
 * SQLite applies flag PRAGMAs (query_only, foreign_keys, …) while it compiles the statement,
 * before any check on the prepared statement can refuse it, and EXPLAIN does not stop that.
 * So read-only calls accept PRAGMA only as a bare read, `PRAGMA name` or `PRAGMA schema.name`;
 * pragmas with arguments are available as table-valued functions (SELECT * FROM pragma_table_info(?)),
 * which SQLite offers only for pragmas without side effects.
 */
export function hasPragmaWithArguments(sql: string): boolean {
  // Text without the letters "pragma" anywhere cannot hold the keyword; this skips the scan for
  // almost every query.
  if (!/pragma/i.test(sql) || !bareWords(sql).includes('PRAGMA')) return false;
  // An allow-list of the one harmless shape, checked on the text without comments.
  return !/^\s*pragma\s+[A-Za-z_][\w$]*(?:\s*\.\s*[A-Za-z_][\w$]*)?\s*;?\s*$/i.test(withoutComments(sql));
}

/** The statement with comments replaced by a space (string literals and quoted names kept). */
export function withoutComments(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
      out += ' ';
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
      out += ' ';
    } else if (c === "'" || c === '"' || c === '`') {
      const end = skipQuoted(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
