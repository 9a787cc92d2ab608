import { ProtocolError as McpError, ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
import { ERROR_CODES, UpstreamError, type ToolError } from '../core/errors.js';

/**
 * JSON-RPC errors, for malformed requests and unknown names, and for failures of requests that
 * have no isError result (resources, prompts). Everything that goes wrong while a tool does its
 * work is a tool result with isError instead (see tools.ts).
 */
/**
 * The SDK's McpError puts "MCP error <code>: " in front of its message, and the SDK sends that
 * message as it is, so a client would show the code twice. Our errors carry the plain message.
 */
function rpcError(code: number, message: string, data?: unknown): McpError {
  const error = new McpError(code, message, data);
  Object.defineProperty(error, 'message', { value: message, enumerable: false, writable: true, configurable: true });
  return error;
}

export const ProtocolError = {
  invalidParams(message: string): McpError {
    return rpcError(ErrorCode.InvalidParams, message);
  },
  methodNotFound(message: string): McpError {
    return rpcError(ErrorCode.MethodNotFound, message);
  },
  internal(message: string): McpError {
    return rpcError(ErrorCode.InternalError, message);
  },
  /**
   * Resource not found: -32602 with the URI as the only data, which the 2026-07-28 revision requires
   * and the SDK sends in both eras (a 2025 client that looks for the older -32002 still sees the URI).
   */
  resourceNotFound(uri: string): McpError {
    return rpcError(ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
  },
  /**
   * An expected failure of a resource read, prompt or completion, with the code for its kind (see
   * ERROR_CODES): only the client's own mistakes are "invalid params". An upstream failure carries
   * `retryAfterSeconds` and the upstream `status` in the error data.
   */
  fromToolError(error: ToolError, message = error.message): McpError {
    const data: Record<string, unknown> = { kind: error.kind };
    if (error instanceof UpstreamError) {
      if (error.retryAfterSeconds !== undefined) data.retryAfterSeconds = error.retryAfterSeconds;
      if (error.status !== undefined) data.status = error.status;
    }
    return rpcError(ERROR_CODES[error.kind], message, data);
  },
};
