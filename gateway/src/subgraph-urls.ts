// Routing URL overrides (SUBGRAPH_<NAME>_URL) applied to the supergraph being served: each subgraph its join__Graph
// enum names is routed by its variable when one is set, in the first supergraph and in every one loaded after it. The
// overrides are written into the SDL the runtime receives, so they follow whatever subgraphs a new supergraph brings;
// the runtime's transport entries are read from each supergraph it loads, its static ones only once.
import { Kind, parse, type DocumentNode } from 'graphql';
import { subgraphUrlVariable } from '@ordergraph/composition/paths';
import type { Logger } from '@ordergraph/core';
import { SUBGRAPH_URL_VARIABLE, subgraphUrlOverrides, type GatewayConfig } from './config.js';

/** The supergraph as createGateway takes it: its SDL, or a source polled for a new one. */
export type SupergraphSource = string | (() => string | Promise<string>);

interface JoinGraph {
  name: string;
  /** Where the `url:` string literal stands in the SDL. */
  url: { start: number; end: number };
}

/** Each `@join__graph(name: "...", url: "...")` on the values of the join__Graph enum. */
function joinGraphs(document: DocumentNode): JoinGraph[] {
  const graphs: JoinGraph[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.ENUM_TYPE_DEFINITION || definition.name.value !== 'join__Graph') continue;
    for (const value of definition.values ?? []) {
      for (const directive of value.directives ?? []) {
        if (directive.name.value !== 'join__graph') continue;
        const argument = (name: string) => directive.arguments?.find((candidate) => candidate.name.value === name)?.value;
        const [name, url] = [argument('name'), argument('url')];
        if (name?.kind === Kind.STRING && url?.kind === Kind.STRING && url.loc) graphs.push({ name: name.value, url: { start: url.loc.start, end: url.loc.end } });
      }
    }
  }
  return graphs;
}

/**
 * `sdl` with the overridden subgraphs' URLs replaced, the rest of its text as it was. An SDL that does not parse is
 * returned as it is, for the runtime to refuse with its own message.
 */
function withOverrides(sdl: string, config: GatewayConfig, logger: Logger): string {
  let document: DocumentNode;
  try {
    document = parse(sdl);
  } catch {
    return sdl;
  }
  const graphs = joinGraphs(document);
  const overrides = subgraphUrlOverrides(config, graphs.map(({ name }) => name));
  const known = new Set<string>(graphs.map(({ name }) => subgraphUrlVariable(name)));
  const unused = Object.keys(config).filter((variable) => SUBGRAPH_URL_VARIABLE.test(variable) && !known.has(variable));
  // A misspelt variable would otherwise be ignored without a word.
  if (unused.length > 0) logger.warn({ variables: unused, subgraphs: graphs.map(({ name }) => name) }, 'SUBGRAPH_<NAME>_URL set for no subgraph of the supergraph');
  if (Object.keys(overrides).length > 0) logger.info({ overrides }, 'subgraph routing URLs overridden');
  let rewritten = sdl;
  // From the end, so the offsets of the literals still to replace stay valid.
  for (const { name, url } of [...graphs].sort((a, b) => b.url.start - a.url.start)) {
    const location = overrides[name];
    if (location !== undefined) rewritten = `${rewritten.slice(0, url.start)}${JSON.stringify(location)}${rewritten.slice(url.end)}`;
  }
  return rewritten;
}

/**
 * The supergraph source with the routing URL overrides applied to every SDL it yields. A polled source is rewritten only
 * when its SDL changes, and the same string is returned while it does not, so the runtime sees no new supergraph.
 */
export function withSubgraphUrls<S extends SupergraphSource>(source: S, config: GatewayConfig, logger: Logger): S {
  if (typeof source === 'string') return withOverrides(source, config, logger) as S;
  let last: { sdl: string; served: string } | undefined;
  const served = (sdl: string) => {
    if (last?.sdl !== sdl) last = { sdl, served: withOverrides(sdl, config, logger) };
    return last.served;
  };
  return (() => {
    const sdl = source();
    return typeof sdl === 'string' ? served(sdl) : sdl.then(served);
  }) as S;
}
