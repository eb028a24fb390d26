// The largest request the gateway reads, over any transport: an HTTP body (server/http.ts answers 413 past it), a
// WebSocket message (subscriptions/websocket.ts closes with 1009), an MCP call (mcp/endpoint.ts).
export const MAX_BODY_BYTES = 1024 * 1024;
