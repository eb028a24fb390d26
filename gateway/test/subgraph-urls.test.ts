// SUBGRAPH_<NAME>_URL written into the supergraph served: only the overridden subgraphs' URLs change, for the names
// the supergraph has, and a polled source is rewritten once per new SDL.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../src/config.js';
import { withSubgraphUrls } from '../src/subgraph-urls.js';

const supergraph = (...graphs: [string, string][]) => `schema @link(url: "https://specs.apollo.dev/link/v1.0") { query: Query }
directive @join__graph(name: String!, url: String!) on ENUM_VALUE
enum join__Graph {
${graphs.map(([name, url]) => `  ${name.toUpperCase().replaceAll('-', '_')} @join__graph(name: "${name}", url: "${url}")`).join('\n')}
}
type Query { ping: String }
`;

/** A logger whose lines the test reads back. */
function capturingLogger() {
  const lines: { level: number; msg: string; variables?: string[] }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

const config = loadGatewayConfig({ SUBGRAPH_STOCK_LEVELS_URL: 'http://stock.internal:4010/graphql', SUBGRAPH_WAREHOUSE_URL: 'http://warehouse:4011/graphql' });

describe('withSubgraphUrls', () => {
  it('replaces the URL of each subgraph whose variable is set, and nothing else of the SDL', () => {
    const { logger } = capturingLogger();
    const sdl = supergraph(['reviews', 'http://reviews:4004/graphql'], ['stock-levels', 'http://localhost:4010/graphql']);
    expect(withSubgraphUrls(sdl, config, logger)).toBe(sdl.replace('http://localhost:4010/graphql', 'http://stock.internal:4010/graphql'));
  });

  it('warns of a variable that names no subgraph of the supergraph, so a misspelt one is seen', () => {
    const { lines, logger } = capturingLogger();
    withSubgraphUrls(supergraph(['stock-levels', 'http://localhost:4010/graphql']), config, logger);
    expect(lines.filter(({ level }) => level === 40)).toEqual([expect.objectContaining({ variables: ['SUBGRAPH_WAREHOUSE_URL'] })]);
  });

  it('rewrites a polled source once per new SDL, answering the same string while it does not change', async () => {
    const { logger } = capturingLogger();
    let current = supergraph(['stock-levels', 'http://localhost:4010/graphql']);
    const source = withSubgraphUrls(() => current, config, logger);
    const first = await source();
    expect(await source()).toBe(first);
    expect(first).toContain('http://stock.internal:4010/graphql');
    current = supergraph(['stock-levels', 'http://localhost:4010/graphql'], ['warehouse', 'http://localhost:4011/graphql']);
    const second = await source();
    expect(second).toContain('"http://warehouse:4011/graphql"');
    expect(second).not.toContain('localhost');
  });

  it('leaves an SDL that does not parse to the runtime, which refuses it with its own message', () => {
    const { logger } = capturingLogger();
    expect(withSubgraphUrls('enum join__Graph {', config, logger)).toBe('enum join__Graph {');
  });
});
