import { createHash, randomBytes } from 'node:crypto';
import { createRequestStateCodec, inputRequired, type InputRequest, type InputRequiredResult, type RequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError } from './protocol-errors.js';
import { bindingOf } from '../auth/principal.js';

/**
 * Server-to-client needs (sampling, roots, elicitation) in the 2026-07-28 era. There the server
 * cannot ask the client mid-request: it answers `input_required` with what it needs, and the client
 * retries the same request with the answers. Handlers stay written in the push style
 * (`await ctx.client.createMessage(...)`): each need gets a key in the order the handler asks, an
 * answer already given is returned at once, and a missing one stops the handler with
 * {@link InputNeeded}. The retry runs the handler again from the start with every answer so far;
 * the answers of earlier rounds travel in `requestState`, sealed with an HMAC.
 */
export class InputNeeded extends Error {
  constructor(
    readonly key: string,
    readonly request: InputRequest,
  ) {
    super(`The client must answer ${key} first.`);
    this.name = 'InputNeeded';
  }
}

/** What a sealed requestState holds: the answers so far, the request they belong to, and what was asked. */
interface SealedState {
  answers: Record<string, unknown>;
  call: string;
  /** The keys the input_required that minted this state asked for: the only answers its retry may bring. */
  asked?: string[];
}

/** Seals and opens requestState. Every process that may see a retry needs the same key. */
export class RequestStateSeal {
  private readonly codec: RequestStateCodec<SealedState>;

  /**
   * @param key at least 32 bytes; a random per-process key when absent (a retry must then reach
   *   the same process, which holds for stdio and for one HTTP process)
   */
  constructor(key: string | undefined, ttlSeconds = 600) {
    if (key !== undefined && Buffer.byteLength(key, 'utf8') < 32) {
      throw new RangeError('The requestState key must be at least 32 bytes long.');
    }
    this.codec = createRequestStateCodec<SealedState>({
      key: key ?? randomBytes(32),
      ttlSeconds,
      // A state minted for one principal and method is refused for another.
      bind: (ctx) => `${ctx.mcpReq.method}\0${principalOf(ctx)}`,
    });
  }

  readonly verify = (state: string, ctx: ServerContext): Promise<SealedState> => this.codec.verify(state, ctx);

  mint(state: SealedState, ctx: ServerContext): Promise<string> {
    return this.codec.mint(state, ctx);
  }
}

let processSeal: RequestStateSeal | undefined;

/** Sets the process's requestState key (the CLI does, from its flag or environment); undefined for a random one. */
export function configureRequestState(key: string | undefined): void {
  processSeal = new RequestStateSeal(key);
}

/** The process's seal: every instance must share it, since a retry may reach another instance. */
export function processRequestStateSeal(): RequestStateSeal {
  return (processSeal ??= new RequestStateSeal(undefined));
}

/** One 2026-07-28 request's answers from the client, earlier rounds' and this round's. */
export class InputLedger {
  private readonly counters = new Map<string, number>();
  /** The needs asked this round without an answer (a task waits for all of them at once). */
  private readonly missing = new Map<string, InputRequest>();

  private constructor(
    private readonly answers: Record<string, unknown>,
    private readonly call: string,
  ) {}

  /**
   * The ledger of a request: `call` names what the request asks (method, target and arguments), so
   * answers given for one call cannot be replayed into another.
   */
  static open(ctx: ServerContext, call: unknown): InputLedger {
    const digest = createHash('sha256').update(stableJson(call)).digest('base64url');
    const sealed = ctx.mcpReq.requestState<SealedState>();
    const answers: Record<string, unknown> = {};
    // Answers count only as replies to what this server asked, which its sealed state names: the
    // client cannot answer a question before it is put (roots that widen access, a sampling result
    // the handler never requested), so inputResponses without a requestState, or beyond what it
    // asked, are ignored.
    if (sealed === undefined) return new InputLedger(answers, digest);
    if (typeof sealed !== 'object' || sealed === null || (sealed as SealedState).call !== digest) {
      throw ProtocolError.invalidParams('The requestState belongs to another request. Send the request again without requestState and inputResponses.');
    }
    Object.assign(answers, (sealed as SealedState).answers);
    const responses = ctx.mcpReq.inputResponses ?? {};
    for (const key of (sealed as SealedState).asked ?? []) if (Object.hasOwn(responses, key)) answers[key] = responses[key];
    return new InputLedger(answers, digest);
  }

  /** A task's ledger: the answers its client gave through tasks/update (stored, not sealed). */
  static withAnswers(answers: Record<string, unknown>): InputLedger {
    return new InputLedger({ ...answers }, 'task');
  }

  /** What this round asked without an answer, by key. */
  pendingRequests(): Record<string, InputRequest> {
    return Object.fromEntries(this.missing);
  }

  /** The next key for a need of this kind: the same handler asks in the same order each round. */
  nextKey(kind: string): string {
    const n = (this.counters.get(kind) ?? 0) + 1;
    this.counters.set(kind, n);
    return n === 1 ? kind : `${kind}-${n}`;
  }

  /** The client's answer to `key`, or {@link InputNeeded} asking for it. */
  answer(key: string, request: InputRequest): unknown {
    if (Object.hasOwn(this.answers, key)) return this.answers[key];
    this.missing.set(key, request);
    throw new InputNeeded(key, request);
  }

  async inputRequired(needed: InputNeeded, seal: RequestStateSeal, ctx: ServerContext): Promise<InputRequiredResult> {
    const requestState = await seal.mint({ answers: this.answers, call: this.call, asked: [needed.key] }, ctx);
    return inputRequired({ inputRequests: { [needed.key]: needed.request }, requestState });
  }
}

/** The caller: in OAuth mode the principal (a refreshed token keeps its state), else the token's digest. */
function principalOf(ctx: ServerContext): string {
  return bindingOf(ctx.http?.authInfo)?.toString('base64url') ?? '';
}

/** JSON with object keys sorted, so the same arguments always digest the same. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export { inputRequired };
