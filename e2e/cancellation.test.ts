// A client that leaves: its queries' subgraph calls are cancelled, unless another client waits on the same call, and
// a mutation it stops waiting for still completes. Against a subgraph of the test's own ("slow") whose fields wait for
// the test, composed with the real three, so the test sees each call start and whether the gateway cut it.
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { composeSupergraph, readSupergraphConfig, writeSupergraph } from '@ordergraph/composition';
import { graphql, readCounter, token, waitFor } from '@ordergraph/testkit';
import { startSupergraph, type Supergraph } from '@ordergraph/testkit/e2e';

const TYPE_DEFS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Query { slowAnswer: Int! slowEcho(value: Int!): Int! probe: Int! }
  type Mutation { slowWrite: Int! }
`;

/** The slow subgraph: `slowAnswer`, `slowEcho` and `slowWrite` wait for `release()`; each call's fate is counted. */
function slowSubgraph() {
  let gate = Promise.withResolvers<void>();
  const counts = { started: 0, cut: 0, written: 0 };
  const waitInside = async (res: ServerResponse) => {
    counts.started++;
    // The response closes before it was written only when the caller went away.
    res.once('close', () => !res.writableFinished && counts.cut++);
    await gate.promise;
  };
  const server = new ApolloServer<{ res: ServerResponse }>({
    schema: buildSubgraphSchema([
      {
        typeDefs: parse(TYPE_DEFS),
        resolvers: {
          Query: {
            probe: () => 1,
            slowAnswer: async (_: unknown, __: unknown, { res }: { res: ServerResponse }) => (await waitInside(res), 42),
            slowEcho: async (_: unknown, { value }: { value: number }, { res }: { res: ServerResponse }) => (await waitInside(res), value),
          },
          Mutation: {
            slowWrite: async (_: unknown, __: unknown, { res }: { res: ServerResponse }) => {
              await waitInside(res);
              return ++counts.written;
            },
          },
        },
      },
    ]),
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  return {
    server,
    counts,
    release() {
      gate.resolve();
      gate = Promise.withResolvers<void>();
    },
  };
}

let supergraph: Supergraph;
let dir: string;
let admin: string;
const slow = slowSubgraph();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergraph-cancel-'));
  const file = join(dir, 'supergraph.graphql');
  // A subgraph timeout far beyond the test's waits: only a cancellation can cut a call here.
  supergraph = await startSupergraph({ supergraphFile: file, gatewayEnv: { SUPERGRAPH_POLL_INTERVAL: '50', SUBGRAPH_TIMEOUT_MS: '120000', REQUEST_DEADLINE_MS: '180000' } });
  const { url } = await startStandaloneServer(slow.server, { listen: { port: 0, host: '127.0.0.1' }, context: async ({ res }) => ({ res }) });
  const subgraphs = [...readSupergraphConfig(), { name: 'slow', url, schemaPath: '(test)', typeDefs: TYPE_DEFS }];
  writeSupergraph(file, composeSupergraph(subgraphs, { ...supergraph.subgraphs, slow: url }));
  await waitFor(async () => (await graphql(supergraph.url, '{ probe }')).body.data?.['probe'] === 1, 'the slow subgraph composed in');
  admin = await token('ADMIN', 'user-0000');
});
afterEach(() => {
  slow.release();
  Object.assign(slow.counts, { started: 0, cut: 0, written: 0 });
});
afterAll(async () => {
  slow.release();
  await supergraph?.stop();
  await slow.server.stop().catch(() => undefined); // not started if the supergraph failed to
  rmSync(dir, { recursive: true, force: true });
});

/** Sends `query` as a client that may leave (an administrator unless `as` says): `leave()` aborts its request. */
function client(query: string, as = admin) {
  const leaving = new AbortController();
  const answer = fetch(supergraph.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${as}` },
    body: JSON.stringify({ query }),
    signal: leaving.signal,
  }).then(async (response) => (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] });
  answer.catch(() => undefined); // a client that left reads nothing
  return { answer, leave: () => leaving.abort() };
}

const metric = (name: string, labels: Record<string, string>) => readCounter(supergraph.url.replace(/\/graphql$/, '/metrics'), name, labels);
const callsWaiting = () => metric('gateway_subgraph_requests_in_flight', { subgraph: 'slow' });

describe('a client that leaves', () => {
  it('has its query cancelled at the subgraph', async () => {
    const alone = client('{ slowAnswer }');
    await waitFor(() => slow.counts.started === 1, 'the subgraph call to start');
    alone.leave();
    await waitFor(() => slow.counts.cut === 1, 'the gateway to cut the subgraph call');
    await waitFor(async () => (await callsWaiting()) === 0, 'no call left waiting');
  });

  it("is counted as a client that closed, not as the subgraph's error or the operation's (alerts watch those)", async () => {
    const closed = { operation: 'Leaving', status: 'client_closed' };
    const leaving = client('query Leaving { slowAnswer }');
    await waitFor(() => slow.counts.started === 1, 'the subgraph call to start');
    leaving.leave();
    await waitFor(async () => (await metric('graphql_request_duration_seconds_count', closed)) === 1, 'the request to be counted as closed');
    expect(await metric('gateway_subgraph_errors_total', { subgraph: 'slow' })).toBe(0);
    expect(await metric('graphql_operation_errors_total', { operation: 'Leaving' })).toBe(0);
  });

  it('does not count against the subgraph: clients leaving, however many, never open its circuit', async () => {
    for (let round = 1; round <= 3; round++) {
      const leaving = Array.from({ length: 8 }, () => client('{ slowAnswer }'));
      await waitFor(async () => (await callsWaiting()) === 8, 'eight clients waiting on one call');
      for (const one of leaving) one.leave();
      await waitFor(() => slow.counts.cut === round, 'the gateway to cut the call');
      await waitFor(async () => (await callsWaiting()) === 0, 'no call left waiting');
    }
    const readyz = (await (await fetch(supergraph.url.replace(/\/graphql$/, '/readyz'))).json()) as { subgraphs: Record<string, string> };
    expect(readyz.subgraphs['slow']).toBe('closed');
  });

  it('does not cancel a call another client shares: that client gets the whole answer', async () => {
    const [leaving, staying] = [client('{ slowAnswer }'), client('{ slowAnswer }')];
    // Both wait on the gateway's side; the subgraph got one call.
    await waitFor(async () => (await callsWaiting()) === 2, 'both clients waiting on the subgraph');
    expect(slow.counts.started).toBe(1);
    leaving.leave();
    await waitFor(async () => (await callsWaiting()) === 1, 'the leaving client to be gone');
    slow.release();
    expect(await staying.answer).toEqual({ data: { slowAnswer: 42 } });
    expect(slow.counts).toEqual({ started: 1, cut: 0, written: 0 });
  });

  it('shares a call only with an identical one: a query of the same length gets its own call and its own answer', async () => {
    const [one, two] = [client('{ slowEcho(value: 1) }'), client('{ slowEcho(value: 2) }')];
    await waitFor(() => slow.counts.started === 2, 'a call for each query');
    const again = client('{ slowEcho(value: 2) }');
    await waitFor(async () => (await callsWaiting()) === 3, 'the third client waiting on the second call');
    expect(slow.counts.started).toBe(2);
    slow.release();
    expect(await Promise.all([one.answer, two.answer, again.answer])).toEqual([{ data: { slowEcho: 1 } }, { data: { slowEcho: 2 } }, { data: { slowEcho: 2 } }]);
  });

  it('never shares a call between callers of different credentials', async () => {
    const other = await token('ADMIN', 'user-0003');
    const [first, second] = [client('{ slowAnswer }'), client('{ slowAnswer }', other)];
    await waitFor(() => slow.counts.started === 2, 'a call for each credential');
    slow.release();
    for (const one of [first, second]) expect(await one.answer).toEqual({ data: { slowAnswer: 42 } });
  });

  it('does not cancel a mutation: the write completes', async () => {
    const writer = client('mutation { slowWrite }');
    await waitFor(() => slow.counts.started === 1, 'the mutation to reach the subgraph');
    writer.leave();
    slow.release();
    await waitFor(() => slow.counts.written === 1, 'the write to complete');
    await waitFor(async () => (await callsWaiting()) === 0, 'the gateway to take its answer');
    expect(slow.counts.cut).toBe(0);
  });
});
