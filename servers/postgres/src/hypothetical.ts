/**
 * Hypothetical indexes through the hypopg extension: a strict reader for the CREATE INDEX
 * statements a caller gives, and their creation on the call's own connection.
 *
 * A statement is never passed on as written: it is read token by token against a narrow grammar
 * (columns, a few expression forms, a simple WHERE), then written out again from the tokens and
 * handed to hypopg_create_index as a bound parameter. hypopg only parses it and keeps the index
 * in the backend's memory, which a ROLLBACK does not clear: the connection is therefore closed
 * after the call (Transaction.discardConnection), so nothing outlives it.
 */
import pg from 'pg';
import { ToolError } from '@suite/shared';
import type { Transaction } from './database.js';
import { isDatabaseError } from './errors.js';

/** A CREATE INDEX statement as read: its parts and the statement rewritten from them. */
export interface IndexStatement {
  /** The statement as hypopg receives it (and as a DBA would run it). */
  ddl: string;
  /** The table, as written (quoted where it was quoted). */
  table: string;
  method: string;
  /** Key columns and expressions as written out. */
  keys: string[];
  unique: boolean;
}

type Token = { kind: 'ident'; text: string; quoted: boolean } | { kind: 'string'; text: string } | { kind: 'number'; text: string } | { kind: 'punct'; text: string };

/** Access methods hypopg can make hypothetical indexes of. */
const METHODS = new Set(['btree', 'hash', 'brin', 'bloom']);

/** Functions an index expression may call: immutable built-ins, nothing that reads or writes. */
const EXPRESSION_FUNCTIONS = new Set(['lower', 'upper', 'coalesce', 'abs', 'length', 'btrim', 'ltrim', 'rtrim', 'date_trunc', 'md5']);

/** Words with a meaning in an index predicate or expression (anything else is a column name). */
const PREDICATE_WORDS = new Set(['and', 'or', 'not', 'is', 'null', 'true', 'false', 'in', 'between', 'like', 'ilike', 'distinct', 'from']);

/** Words that start or steer a statement: never a column name in an index (quote such a column). */
const STATEMENT_WORDS = new Set([
  'select', 'insert', 'update', 'delete', 'drop', 'create', 'alter', 'grant', 'revoke', 'set', 'reset', 'commit', 'rollback', 'begin', 'end',
  'copy', 'do', 'call', 'with', 'union', 'into', 'table', 'where', 'returning', 'truncate', 'execute', 'prepare', 'listen', 'notify',
  'lock', 'vacuum', 'analyze', 'show', 'declare', 'fetch', 'savepoint', 'transaction', 'as', 'case', 'when', 'then', 'else', 'limit',
  'order', 'group', 'having', 'join', 'on', 'using', 'values', 'default', 'lateral', 'array', 'row',
]);

/**
 * An expression or predicate is a sequence of operands and operators: two names in a row (other
 * than IS NOT NULL and the like) or a statement word means it is something else.
 */
function checkExpressionTokens(statement: string, tokens: Token[]): void {
  tokens.forEach((token, i) => {
    if (token.kind !== 'ident' || token.quoted) return;
    if (STATEMENT_WORDS.has(token.text)) throw invalid(statement, `${token.text.toUpperCase()} inside an expression`);
    const next = tokens[i + 1];
    if (next?.kind === 'ident' && !PREDICATE_WORDS.has(token.text) && !PREDICATE_WORDS.has(next.text)) {
      throw invalid(statement, `two names in a row ("${token.text} ${next.text}") inside an expression`);
    }
  });
}

const OPERATORS = ['<>', '!=', '<=', '>=', '||', '::', '=', '<', '>', '+', '-', '*', '/', '%'];

const MAX_STATEMENT_LENGTH = 4_000;

function invalid(statement: string, why: string): ToolError {
  return ToolError.invalidArgument(
    `Not a CREATE INDEX statement this tool accepts (${why}): ${JSON.stringify(statement.length > 200 ? `${statement.slice(0, 200)}...` : statement)}. ` +
      'Give one statement of the form CREATE [UNIQUE] INDEX [name] ON [schema.]table [USING btree|hash|brin|bloom] (column [ASC|DESC] [NULLS FIRST|LAST], ...) [INCLUDE (column, ...)] [WHERE simple condition].',
  );
}

function tokenize(statement: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < statement.length) {
    const c = statement[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      let text = '';
      i++;
      for (;;) {
        if (i >= statement.length) throw invalid(statement, 'an unterminated quoted name');
        if (statement[i] === '"') {
          if (statement[i + 1] === '"') {
            text += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += statement[i++];
      }
      if (text === '' || text.includes('\0')) throw invalid(statement, 'an empty quoted name');
      tokens.push({ kind: 'ident', text, quoted: true });
    } else if (c === "'") {
      let text = '';
      i++;
      for (;;) {
        if (i >= statement.length) throw invalid(statement, 'an unterminated string');
        if (statement[i] === "'") {
          if (statement[i + 1] === "'") {
            text += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += statement[i++];
      }
      tokens.push({ kind: 'string', text });
    } else if (/[A-Za-z_]/.test(c)) {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(statement.slice(i))!;
      // Unquoted names fold to lower case, as PostgreSQL reads them.
      tokens.push({ kind: 'ident', text: match[0].toLowerCase(), quoted: false });
      i += match[0].length;
    } else if (/[0-9]/.test(c)) {
      const match = /^[0-9]+(\.[0-9]+)?/.exec(statement.slice(i))!;
      tokens.push({ kind: 'number', text: match[0] });
      i += match[0].length;
    } else if ('(),.;'.includes(c)) {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else {
      const operator = OPERATORS.find((op) => statement.startsWith(op, i));
      if (!operator) throw invalid(statement, `the character ${JSON.stringify(c)}`);
      tokens.push({ kind: 'punct', text: operator });
      i += operator.length;
    }
  }
  return tokens;
}

function quoteName(token: Token & { kind: 'ident' }): string {
  return token.quoted ? pg.escapeIdentifier(token.text) : token.text;
}

/** Writes tokens back as SQL: no space inside parentheses, before a comma, around a dot, or before a call's "(". */
function writeTokens(tokens: Token[]): string {
  let out = '';
  tokens.forEach((token, i) => {
    const previous = tokens[i - 1];
    const tight =
      previous === undefined ||
      (previous.kind === 'punct' && (previous.text === '(' || previous.text === '.' || previous.text === '::')) ||
      (token.kind === 'punct' && (token.text === ')' || token.text === ',' || token.text === '.' || token.text === '::')) ||
      (token.kind === 'punct' && token.text === '(' && previous.kind === 'ident' && !PREDICATE_WORDS.has(previous.text));
    out += (tight ? '' : ' ') + writeToken(token);
  });
  return out;
}

function writeToken(token: Token): string {
  if (token.kind === 'ident') return quoteName(token);
  if (token.kind === 'string') return pg.escapeLiteral(token.text).replace(/^ E'/, "E'");
  return token.text;
}

/** Reads one CREATE INDEX statement; throws an invalid-argument ToolError for anything else. */
export function parseIndexStatement(statement: string): IndexStatement {
  if (statement.length > MAX_STATEMENT_LENGTH) throw invalid(statement, `longer than ${MAX_STATEMENT_LENGTH} characters`);
  const tokens = tokenize(statement);
  let at = 0;
  const peek = (offset = 0): Token | undefined => tokens[at + offset];
  const isWord = (token: Token | undefined, word: string): boolean => token?.kind === 'ident' && !token.quoted && token.text === word;
  const isPunct = (token: Token | undefined, text: string): boolean => token?.kind === 'punct' && token.text === text;
  const expectWord = (word: string): void => {
    if (!isWord(peek(), word)) throw invalid(statement, `expected ${word.toUpperCase()}`);
    at++;
  };
  const expectPunct = (text: string): void => {
    if (!isPunct(peek(), text)) throw invalid(statement, `expected "${text}"`);
    at++;
  };
  const name = (what: string): Token & { kind: 'ident' } => {
    const token = peek();
    if (token?.kind !== 'ident') throw invalid(statement, `expected ${what}`);
    at++;
    return token;
  };

  expectWord('create');
  const unique = isWord(peek(), 'unique');
  if (unique) at++;
  expectWord('index');
  if (isWord(peek(), 'concurrently')) at++;
  if (isWord(peek(), 'if')) {
    at++;
    expectWord('not');
    expectWord('exists');
  }
  // The index's own name is not kept: hypopg names hypothetical indexes itself.
  if (!isWord(peek(), 'on')) name('an index name or ON');
  expectWord('on');
  if (isWord(peek(), 'only')) at++;
  let table = quoteName(name('a table name'));
  if (isPunct(peek(), '.')) {
    at++;
    table = `${table}.${quoteName(name('a table name after the schema'))}`;
  }
  let method = 'btree';
  if (isWord(peek(), 'using')) {
    at++;
    const token = name('an access method');
    method = token.text.toLowerCase();
    if (!METHODS.has(method)) throw invalid(statement, `hypopg cannot simulate ${method} indexes; it supports btree, hash, brin and bloom`);
  }

  /** A parenthesized expression: column names, literals, operators and a few immutable functions. */
  const expression = (): string => {
    expectPunct('(');
    const parts: Token[] = [{ kind: 'punct', text: '(' }];
    let depth = 1;
    while (depth > 0) {
      const token = peek();
      if (!token) throw invalid(statement, 'an unclosed parenthesis');
      at++;
      if (isPunct(token, '(')) depth++;
      else if (isPunct(token, ')')) depth--;
      else if (isPunct(token, ';')) throw invalid(statement, 'a semicolon inside an expression');
      else if (token.kind === 'ident' && isPunct(peek(), '(') && !EXPRESSION_FUNCTIONS.has(token.text)) {
        throw invalid(statement, `the function ${token.text}() (index expressions may call only ${[...EXPRESSION_FUNCTIONS].join(', ')})`);
      }
      parts.push(token);
    }
    checkExpressionTokens(statement, parts);
    return writeTokens(parts);
  };

  const orderOptions = (): string => {
    const parts: string[] = [];
    if (isWord(peek(), 'asc') || isWord(peek(), 'desc')) {
      parts.push((peek() as { text: string }).text.toUpperCase());
      at++;
    }
    if (isWord(peek(), 'nulls')) {
      at++;
      const which = peek();
      if (!isWord(which, 'first') && !isWord(which, 'last')) throw invalid(statement, 'expected FIRST or LAST after NULLS');
      parts.push(`NULLS ${(which as { text: string }).text.toUpperCase()}`);
      at++;
    }
    return parts.length ? ` ${parts.join(' ')}` : '';
  };

  const columnList = (withOptions: boolean): string[] => {
    expectPunct('(');
    const items: string[] = [];
    for (;;) {
      let item: string;
      if (withOptions && isPunct(peek(), '(')) item = expression();
      else item = quoteName(name('a column name'));
      if (withOptions) item += orderOptions();
      items.push(item);
      if (isPunct(peek(), ',')) {
        at++;
        continue;
      }
      expectPunct(')');
      return items;
    }
  };

  const keys = columnList(true);
  if (keys.length > 32) throw invalid(statement, 'more than 32 key columns');
  let include: string[] = [];
  if (isWord(peek(), 'include')) {
    at++;
    include = columnList(false);
  }
  let where = '';
  if (isWord(peek(), 'where')) {
    at++;
    const parts: Token[] = [];
    let depth = 0;
    while (peek() && !isPunct(peek(), ';')) {
      const token = peek()!;
      at++;
      if (token.kind === 'ident' && !token.quoted && !PREDICATE_WORDS.has(token.text) && isPunct(peek(), '(')) {
        throw invalid(statement, `the function ${token.text}() in the WHERE condition (it may compare columns with constants only)`);
      }
      if (isPunct(token, '(')) depth++;
      if (isPunct(token, ')') && --depth < 0) throw invalid(statement, 'an unbalanced parenthesis');
      parts.push(token);
    }
    if (depth !== 0 || parts.length === 0) throw invalid(statement, 'an incomplete WHERE condition');
    checkExpressionTokens(statement, parts);
    where = ` WHERE ${writeTokens(parts)}`;
  }
  if (isPunct(peek(), ';')) at++;
  if (at !== tokens.length) throw invalid(statement, 'more than one statement, or text after the statement');
  const ddl = `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ON ${table}${method === 'btree' ? '' : ` USING ${method}`} (${keys.join(', ')})${include.length ? ` INCLUDE (${include.join(', ')})` : ''}${where}`;
  return { ddl, table, method, keys, unique };
}

/** What to tell a user whose database lacks hypopg. */
export function hypopgMissing(availableOnServer: boolean): ToolError {
  const create =
    'CREATE EXTENSION hypopg; needs a superuser (or the database owner with the extension marked trusted): have one run it once in this database. It creates no tables and changes nothing until a hypothetical index is made, which lives only in one session\'s memory.';
  return ToolError.unavailable(
    availableOnServer
      ? `The hypopg extension is installed on the server but not created in this database. ${create}`
      : `Hypothetical indexes need the hypopg extension, which is not installed on the database server. Install it (Debian/Ubuntu: apt-get install postgresql-<major>-hypopg; RHEL: dnf install hypopg_<major>; or build it from https://github.com/HypoPG/hypopg), then ${create}`,
  );
}

/** The schema hypopg's functions live in, or the error that says how to get it. */
export async function hypopgSchema(tx: Transaction): Promise<string> {
  const [row] = await tx.rows<{ schema: string | null; available: boolean }>(
    `SELECT (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'hypopg') AS schema,
            EXISTS (SELECT FROM pg_available_extensions WHERE name = 'hypopg') AS available`,
  );
  if (!row?.schema) throw hypopgMissing(row?.available === true);
  return row.schema;
}

export interface HypotheticalIndex {
  oid: number;
  /** The name hypopg gave it (as plans show it: <oid>btree_table_column). */
  name: string;
  statement: IndexStatement;
}

/**
 * Creates hypothetical indexes on this transaction's connection, which is closed after the call.
 * A statement PostgreSQL rejects (no such table or column) is a tool error naming it.
 */
export async function createHypothetical(tx: Transaction, schema: string, statement: IndexStatement): Promise<HypotheticalIndex> {
  tx.discardConnection();
  try {
    const [row] = await tx.rows<{ indexrelid: number; indexname: string }>(`SELECT indexrelid::int AS indexrelid, indexname FROM ${pg.escapeIdentifier(schema)}.hypopg_create_index($1)`, [statement.ddl]);
    if (!row) throw ToolError.invalidArgument(`hypopg did not create an index for ${statement.ddl}.`);
    return { oid: row.indexrelid, name: row.indexname, statement };
  } catch (error) {
    if (isDatabaseError(error)) throw ToolError.invalidArgument(`The hypothetical index ${statement.ddl} cannot be created: ${error.message.replace(/^hypopg: /, '')}.`);
    throw error;
  }
}

export async function dropHypothetical(tx: Transaction, schema: string, index: HypotheticalIndex): Promise<void> {
  await tx.rows(`SELECT ${pg.escapeIdentifier(schema)}.hypopg_drop_index($1)`, [index.oid]);
}

/** hypopg's estimate of an index's size on disk, in bytes. */
export async function hypotheticalSize(tx: Transaction, schema: string, index: HypotheticalIndex): Promise<number> {
  const [row] = await tx.rows<{ size: string }>(`SELECT ${pg.escapeIdentifier(schema)}.hypopg_relation_size($1)::text AS size`, [index.oid]);
  return Number(row?.size ?? 0);
}
