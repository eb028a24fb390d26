// The MCP door (MCP=on): the trusted documents as tools at MCP_PATH, over MCP's Streamable HTTP transport, stateless
// (any replica answers any message). A tool call is a request to the gateway's own /graphql with the caller's headers
// and the document's id, so it meets every plugin of plugins.ts as any client's request does.
import type { IncomingMessage } from 'node:http';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, type Identity, type Logger } from '@ordergraph/core';
import type { GraphQLSchema } from 'graphql';
import { Counter, type Registry } from 'prom-client';
import type { PersistedManifest } from '../persisted-queries/manifest.js';
import type { ViewerContext } from '../security/auth.js';
import { errorResponse } from '../security/errors.js';
import { MAX_BODY_BYTES } from '../shared/body-limit.js';
import { allows, describeRequirements } from './requirements.js';
import { toolsCache, type Toolset, type TrustedTool } from './tools.js';

/** What the door needs of the runtime: the schema it serves now, and its handler for the tool calls. */
export interface McpRuntime {
  schema(): GraphQLSchema | PromiseLike<GraphQLSchema>;
  handle(request: Request, serverContext: { req?: IncomingMessage | undefined }): Response | PromiseLike<Response>;
}

export interface McpOptions {
  path: string;
  graphqlEndpoint: string;
  manifest: PersistedManifest;
  runtime: McpRuntime;
  logger: Logger;
  registry: Registry;
}

const SERVER_INFO = { name: 'ordergraph-gateway', version: '1' };
const INSTRUCTIONS =
  'Each tool runs one trusted GraphQL operation of the ordergraph API (users, orders, products) with your token; its result is the GraphQL response as JSON.';

/**
 * Headers of the MCP request a tool call does not carry on: its body's, the connection's, and MCP's own. Everything
 * else (Authorization, X-Forwarded-For, the request ID, client names, override labels) goes with it, as the caller sent it.
 */
const NOT_FORWARDED = new Set(['content-type', 'content-length', 'accept', 'accept-encoding', 'transfer-encoding', 'connection', 'keep-alive', 'expect', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

function forwardedHeaders(from: Headers): Headers {
  const headers = new Headers();
  from.forEach((value, name) => {
    if (!NOT_FORWARDED.has(name)) headers.set(name, value);
  });
  headers.set('content-type', 'application/json');
  headers.set('accept', 'application/graphql-response+json, application/json');
  return headers;
}

/**
 * The MCP SDK (with its schema validators), loaded by the first MCP request: a gateway with MCP off, or whose door is
 * never called, does not hold its code (about 1 MB of heap for its lifetime, which the old generation sizes itself by).
 */
const loadSdk = () =>
  Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, transport, types]) => ({ ...server, ...transport, ...types }));
type Sdk = Awaited<ReturnType<typeof loadSdk>>;
let sdkLoaded: Promise<Sdk> | undefined;

const toMcpTool = (tool: TrustedTool): Tool => ({
  name: tool.name,
  description: tool.description,
  inputSchema: { ...tool.inputSchema },
  annotations: { readOnlyHint: tool.type === 'query', ...(tool.type === 'mutation' ? { destructiveHint: true } : {}) },
});

export function useMcp(options: McpOptions): GatewayPlugin {
  const { path, graphqlEndpoint, manifest, runtime, logger } = options;
  const calls = new Counter({
    name: 'gateway_mcp_tool_calls_total',
    help: 'MCP tool calls by tool and outcome: ok (an answer with data), error (an answer without data, or refused by the GraphQL pipeline: a limit, a rate limit), refused (the caller lacks what the tool requires), unknown (no such tool)',
    labelNames: ['tool', 'outcome'],
    registers: [options.registry],
  });
  const toolsOf = toolsCache((toolset) => {
    for (const { id, reason } of toolset.skipped) logger.warn({ documentId: id, reason }, 'trusted document not offered as an MCP tool');
    logger.info({ tools: toolset.tools.size, skipped: toolset.skipped.length }, 'MCP tools built');
  });

  /** One tool call, through the gateway's own GraphQL handler. */
  async function call({ McpError, ErrorCode: McpErrorCode }: Sdk, toolset: Toolset, viewer: Identity, name: string, args: Record<string, unknown> | undefined, request: Request, req: IncomingMessage | undefined): Promise<CallToolResult> {
    const tool = toolset.tools.get(name);
    if (!tool) {
      calls.inc({ tool: '(unknown)', outcome: 'unknown' });
      throw new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name}`, { code: ErrorCode.NOT_FOUND });
    }
    // Refused here rather than answered with nulls and errors by the pipeline: the tool is not the caller's to use.
    if (!allows(viewer, tool.requirements)) {
      calls.inc({ tool: name, outcome: 'refused' });
      logger.info({ event: 'mcp_tool_refused', tool: name, userId: viewer.userId }, 'MCP tool call refused');
      throw new McpError(McpErrorCode.InvalidParams, `Tool ${name} requires ${describeRequirements(tool.requirements)}, which this token does not grant`, { code: ErrorCode.FORBIDDEN });
    }
    const graphqlRequest = new Request(new URL(graphqlEndpoint, request.url), {
      method: 'POST',
      headers: forwardedHeaders(request.headers),
      body: JSON.stringify({ documentId: tool.id, operationName: tool.name, variables: args ?? {} }),
    });
    // The MCP request's own `req`: its deadline and its client leaving cancel the call, and an anonymous rate limit
    // would count its address (a caller here is always signed in, counted by user).
    const response = await runtime.handle(graphqlRequest, { req });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const answer = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    const failed = response.status >= 400 || answer?.['data'] == null;
    calls.inc({ tool: name, outcome: failed ? 'error' : 'ok' });
    logger.info({ event: 'mcp_tool_call', tool: name, userId: viewer.userId, status: response.status, outcome: failed ? 'error' : 'ok' }, 'MCP tool call');
    return {
      content: [{ type: 'text', text }],
      ...(answer ? { structuredContent: answer } : {}),
      isError: failed,
    };
  }

  async function answer(request: Request, viewer: Identity, req: IncomingMessage | undefined): Promise<Response> {
    const sdk = await (sdkLoaded ??= loadSdk());
    const { Server, WebStandardStreamableHTTPServerTransport, ListToolsRequestSchema, CallToolRequestSchema } = sdk;
    const toolset = toolsOf(manifest.current(), await runtime.schema());
    const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [...toolset.tools.values()].filter((tool) => allows(viewer, tool.requirements)).map(toMcpTool),
    }));
    server.setRequestHandler(CallToolRequestSchema, ({ params }) => call(sdk, toolset, viewer, params.name, params.arguments, request, req));
    // Stateless: no session to keep, so every replica answers every message; answers are JSON, not event streams.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MAX_BODY_BYTES });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  }

  return {
    // After authentication (plugins.ts): a bad token has already been answered 401, and the viewer is known.
    onRequest({ request, url, serverContext, endResponse }) {
      if (url.pathname !== path || request.method === 'OPTIONS') return undefined;
      if (request.method !== 'POST') {
        // No event stream to open and no session to end: the door is stateless.
        endResponse(errorResponse(405, ErrorCode.METHOD_NOT_ALLOWED, `${path} takes POST only (MCP Streamable HTTP, stateless)`, { allow: 'POST' }));
        return undefined;
      }
      const viewer = (serverContext as Partial<ViewerContext>).viewer ?? null;
      if (viewer === null) {
        endResponse(errorResponse(401, ErrorCode.UNAUTHENTICATED, 'A bearer token is required', { 'www-authenticate': 'Bearer' }));
        return undefined;
      }
      const req = (serverContext as { req?: IncomingMessage }).req;
      return answer(request, viewer, req).then(endResponse, (error: unknown) => {
        logger.error({ err: error }, 'MCP request failed');
        endResponse(errorResponse(503, ErrorCode.INTERNAL_SERVER_ERROR, 'The MCP endpoint cannot answer now'));
      });
    },
  };
}
