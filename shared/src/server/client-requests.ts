import { z } from 'zod';
import { MissingRequiredClientCapabilityError, ProtocolError as SdkProtocolError, SdkError, SdkErrorCode, inputRequired, type ClientCapabilities, type InputRequest, type ServerContext } from '@modelcontextprotocol/server';
import { ToolError } from '../core/errors.js';
import { CancelledError } from '../core/progress.js';
import type { ClientFeatures, ElicitRequest, ElicitResult, ElicitUrlRequest, SamplingRequest, SamplingResult } from './context.js';
import type { InputLedger } from './input-requests.js';
import { clientSupportsApps } from '../apps/meta.js';

/**
 * What a handler's `ctx.client` does in each era: in 2025-11-25 it sends the client a request
 * (sampling, elicitation) inside the call; in 2026-07-28 it reads the answer the client sent with
 * the retried request, or asks for it through input_required.
 */

/** How long a sampling or elicitation request may wait for the client (a human may have to approve it). */
const CLIENT_REQUEST_TIMEOUT_MS = 120_000;

/** A 2025-era session's client: asked directly, with requests tied to the one being handled. */
export function legacyClientFeatures(sdkCtx: ServerContext, clientCaps: ClientCapabilities): ClientFeatures {
  const ask = async <T>(what: string, send: (options: { signal: AbortSignal; timeout: number }) => Promise<T>, timeoutMs: number | undefined): Promise<T> => {
    const timeout = timeoutMs ?? CLIENT_REQUEST_TIMEOUT_MS;
    try {
      return await send({ signal: sdkCtx.mcpReq.signal, timeout });
    } catch (error) {
      if (sdkCtx.mcpReq.signal.aborted) throw new CancelledError();
      if (isTimeout(error)) {
        throw ToolError.timeout(`The client did not answer the ${what} request within ${timeout < 10_000 ? (timeout / 1000).toFixed(1) : Math.round(timeout / 1000)} s.`);
      }
      const reason = error instanceof SdkProtocolError ? error.message.replace(/^MCP error -?\d+: /, '') : 'no reason given';
      throw new ToolError(`The client refused the ${what} request: ${reason}`, 'failed');
    }
  };
  return {
    sampling: clientCaps.sampling !== undefined,
    apps: clientSupportsApps(clientCaps),
    elicitation: clientCaps.elicitation !== undefined,
    elicitationUrl: supportsUrlElicitation(clientCaps),
    roots: clientCaps.roots !== undefined,
    createMessage: async (request: SamplingRequest, options = {}): Promise<SamplingResult> => {
      if (!clientCaps.sampling) throw ToolError.unavailable('The client does not support sampling.');
      const result = await ask('sampling', (o) => sdkCtx.mcpReq.send({ method: 'sampling/createMessage', params: request as never }, o), options.timeoutMs);
      return samplingResultOf(result);
    },
    elicit: async (request: ElicitRequest, options = {}): Promise<ElicitResult> => {
      if (!clientCaps.elicitation) throw ToolError.unavailable('The client does not support elicitation.');
      const result = await ask('elicitation', (o) => sdkCtx.mcpReq.send({ method: 'elicitation/create', params: request as never }, o), options.timeoutMs);
      return elicitResultOf(result);
    },
    elicitUrl: async (request: ElicitUrlRequest, options = {}): Promise<ElicitResult> => {
      if (!supportsUrlElicitation(clientCaps)) throw ToolError.unavailable('The client does not support URL-mode elicitation.');
      const params = { mode: 'url', message: request.message, url: request.url, elicitationId: request.elicitationId };
      const result = await ask('elicitation', (o) => sdkCtx.mcpReq.send({ method: 'elicitation/create', params: params as never }, o), options.timeoutMs);
      return elicitResultOf(result);
    },
  };
}

/**
 * A 2026-07-28 request's client: what it declared in the request's _meta, and its answers so far.
 * A need without an answer stops the handler with InputNeeded (see input-requests.ts). A need the
 * client did not declare the capability for ends the request with -32021
 * (MissingRequiredClientCapabilityError), which the revision requires: the client learns what to
 * declare. Handlers that can do without (most) check `ctx.client.sampling` first and never get here.
 */
export function modernClientFeatures(caps: ClientCapabilities | undefined, ledger: InputLedger | undefined): ClientFeatures {
  const ask = (kind: string, request: InputRequest): unknown => {
    if (!ledger) throw ToolError.unavailable(`This request cannot ask the client for ${kind} in the 2026-07-28 protocol.`);
    return ledger.answer(ledger.nextKey(kind), request);
  };
  const client: ClientFeatures = {
    sampling: caps?.sampling !== undefined,
    elicitation: caps?.elicitation !== undefined,
    elicitationUrl: supportsUrlElicitation(caps),
    roots: caps?.roots !== undefined,
    apps: clientSupportsApps(caps),
    createMessage: async (request: SamplingRequest): Promise<SamplingResult> => {
      if (!caps?.sampling) throw missing({ sampling: {} }, 'sampling');
      return samplingResultOf(ask('sampling', inputRequired.createMessage(request as never)));
    },
    elicit: async (request: ElicitRequest): Promise<ElicitResult> => {
      if (!caps?.elicitation) throw missing({ elicitation: {} }, 'elicitation');
      return elicitResultOf(ask('elicitation', inputRequired.elicit(request as never)));
    },
    elicitUrl: async (request: ElicitUrlRequest): Promise<ElicitResult> => {
      if (!supportsUrlElicitation(caps)) throw missing({ elicitation: { url: {} } }, 'URL-mode elicitation');
      return elicitResultOf(ask('elicitation', inputRequired.elicitUrl({ message: request.message, url: request.url })));
    },
  };
  return client;
}

function missing(requiredCapabilities: ClientCapabilities, what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError({ requiredCapabilities }, `This request needs ${what}: declare it in the client's capabilities.`);
}

/** URL mode is declared apart (`elicitation: { url: {} }`); a bare `elicitation: {}` means form mode only. */
function supportsUrlElicitation(caps: ClientCapabilities | undefined): boolean {
  const elicitation = caps?.elicitation as Record<string, unknown> | undefined;
  return elicitation !== undefined && elicitation.url !== undefined;
}

function isTimeout(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
}

function samplingResultOf(raw: unknown): SamplingResult {
  const result = SAMPLING_RESULT.safeParse(raw);
  if (!result.success) throw new ToolError('The client answered the sampling request with something that is not a sampling result.', 'failed');
  const content = (Array.isArray(result.data.content) ? result.data.content[0] : result.data.content) as SamplingResult['content'];
  return {
    role: result.data.role,
    content,
    model: result.data.model,
    ...(result.data.stopReason ? { stopReason: result.data.stopReason } : {}),
    text: content?.type === 'text' ? content.text : '',
  };
}

function elicitResultOf(raw: unknown): ElicitResult {
  const result = ELICIT_RESULT.safeParse(raw);
  if (!result.success) throw new ToolError('The client answered the elicitation request with something that is not an elicitation result.', 'failed');
  return { action: result.data.action, ...(result.data.content ? { content: result.data.content as ElicitResult['content'] } : {}) };
}

const SAMPLING_RESULT = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.looseObject({ type: z.string() }), z.array(z.looseObject({ type: z.string() })).min(1)]),
  model: z.string(),
  stopReason: z.string().optional(),
});

const ELICIT_RESULT = z.looseObject({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});
