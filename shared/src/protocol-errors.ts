import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON-RPC errors, for malformed requests and unknown names only. Everything that goes wrong
 * while doing the work is a tool result with isError instead (see tools.ts).
 */
export const ProtocolError = {
  invalidParams(message: string): McpError {
    return new McpError(ErrorCode.InvalidParams, message);
  },
  methodNotFound(message: string): McpError {
    return new McpError(ErrorCode.MethodNotFound, message);
  },
  internal(message: string): McpError {
    return new McpError(ErrorCode.InternalError, message);
  },
  /** Resource not found: -32002 as the spec recommends. */
  resourceNotFound(uri: string): McpError {
    return new McpError(-32002, `Resource not found: ${uri}`, { uri });
  },
};
