import { DEV_JWT_SECRET, fromGlobalId, signDevToken, toGlobalId, type Role } from '@ordergraph/core';

export interface GraphQLResponse<TData = Record<string, any>> {
  status: number;
  headers: Headers;
  body: {
    data?: TData | null;
    errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any>; locations?: unknown }[];
    extensions?: Record<string, any>;
  };
}

/** POSTs a GraphQL operation over real HTTP. */
export async function graphql<TData = Record<string, any>>(
  url: string,
  query: string,
  options: { variables?: Record<string, unknown>; token?: string; headers?: Record<string, string>; operationName?: string; extensions?: Record<string, unknown> } = {},
): Promise<GraphQLResponse<TData>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body: JSON.stringify({ query, variables: options.variables, operationName: options.operationName, extensions: options.extensions }),
  });
  const text = await response.text();
  let body: GraphQLResponse<TData>['body'];
  try {
    body = JSON.parse(text) as GraphQLResponse<TData>['body'];
  } catch {
    throw new Error(`Non-JSON response (${response.status}): ${text.slice(0, 500)}`);
  }
  return { status: response.status, headers: response.headers, body: withoutRequestIds(body, response.headers) };
}

/**
 * Every error names the request's ID, the one in the x-request-id header: checked here for every response a suite
 * reads, then removed, so assertions about an error's shape stay about that shape.
 */
export function withoutRequestIds<T extends { errors?: readonly { extensions?: Record<string, any> }[] | undefined }>(body: T, headers: Headers): T {
  if (!body.errors) return body;
  const requestId = headers.get('x-request-id');
  return {
    ...body,
    errors: body.errors.map((error) => {
      const { requestId: named, ...extensions } = error.extensions ?? {};
      if (requestId && named !== requestId) throw new Error(`error without the request's ID ${requestId}: ${JSON.stringify(error)}`);
      return { ...error, extensions };
    }),
  };
}

/** A development token for a user given by local id (as seeded) or global ID. */
export function token(role: Role, user: string, options: { expiresIn?: string | number; secret?: string } = {}): Promise<string> {
  // A global ID is taken as it is; anything else is a seeded local id such as `user-0001`.
  const sub = fromGlobalId(user)?.type === 'User' ? user : toGlobalId('User', user);
  return signDevToken(options.secret ?? DEV_JWT_SECRET, { sub, role, ...(options.expiresIn ? { expiresIn: options.expiresIn } : {}) });
}

/** Reads one counter (summed over its label sets matching `labels`) from a Prometheus /metrics endpoint. */
export async function readCounter(metricsUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  return counterIn(await (await fetch(metricsUrl)).text(), name, labels);
}

/** One counter (summed over its label sets matching `labels`) of a /metrics text already read. */
export function counterIn(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`));
    if (matches) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
