// npm run bench's options and its --help, side by side so that a test can hold them to each other.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCENARIOS } from './scenarios.js';

/**
 * The scenarios a plain `npm run bench` runs: the identical-request ones, to compare with earlier runs, and (d) and (g),
 * whose requests differ from one to the next, the headline, and (h) to (j) over the whole data set, at scale 1 and at
 * --scale. (e) and (f) on demand.
 */
export const DEFAULT_SCENARIOS = ['a', 'b', 'c', 'd', 'g', 'h', 'i', 'j'];

/** Where the chart goes unless --chart says otherwise: git-ignored, so a run never rewrites the committed bench/results.svg. */
export const DEFAULT_CHART = fileURLToPath(new URL('./out/results.svg', import.meta.url));

export const GATEWAYS_OPTIONS = {
  rounds: { type: 'string', default: '2' },
  duration: { type: 'string', default: '5' },
  warmup: { type: 'string', default: '2' },
  connections: { type: 'string', default: '32' },
  scenarios: { type: 'string', default: DEFAULT_SCENARIOS.join(',') },
  scale: { type: 'string', default: '1000' },
  gateways: { type: 'string', default: 'ours,hive runtime,hive runtime + rust planner,@apollo/gateway,grafbase' },
  profile: { type: 'string' },
  heap: { type: 'string' },
  'ours-with': { type: 'string' },
  'ours-also': { type: 'string' },
  'own-subgraphs': { type: 'boolean', default: false },
  'entity-cache': { type: 'string' },
  chart: { type: 'string', default: DEFAULT_CHART },
  help: { type: 'boolean', default: false },
} as const;

/** The scenarios `--scenarios` names, in the order they run ((g)'s writes last); an unknown id is an error. */
export function selectScenarios(ids: string): typeof SCENARIOS {
  const wanted = ids.split(',').map((id) => id.trim()).filter(Boolean);
  const unknown = wanted.filter((id) => !SCENARIOS.some((scenario) => scenario.id === id));
  if (unknown.length > 0) throw new Error(`--scenarios: no scenario ${unknown.join(', ')}; there are ${SCENARIOS.map((scenario) => scenario.id).join(', ')}`);
  return SCENARIOS.filter((scenario) => wanted.includes(scenario.id));
}

const chart = relative(process.cwd(), DEFAULT_CHART);

export const GATEWAYS_HELP = `npm run bench -- [options]
  --rounds 2          alternating rounds per scenario (each gateway once per round)
  --duration 5        seconds of load per gateway per round
  --warmup 2          seconds of load per gateway before the first round (not counted), repeated until it has served
                      500 requests and its CPU per request has stopped falling by 5 % a pass (10 passes at most)
  --connections 32    autocannon's concurrent connections
  --scenarios <ids>   which scenarios to run, comma-separated (bench/scenarios.ts); default ${GATEWAYS_OPTIONS.scenarios.default}
                      of ${SCENARIOS.map((scenario) => scenario.id).join(',')}: a-c send one identical request, d-g draw each request's arguments
                      from the seed (g mixes query shapes and writes), h-j draw keys from the whole data set
  --scale 1000        the SEED_SCALE the size scenarios (h, i, j; f too when named) run at too, after every scenario has run at scale 1:
                      every subgraph and gateway is started anew on a data set that size (1000: 100,000 users,
                      200,000 products, 1,000,000 orders; about a minute to seed); 1 runs them at scale 1 only
  --gateways <names>  which gateways to run, comma-separated (ours first: the ratios are ours/each); default
                      ${GATEWAYS_OPTIONS.gateways.default}; the others run on
                      the packages as published, and "hive runtime + rust planner on our patches" (only when named)
                      is that engine on our patched node_modules; grafbase is Grafbase's Rust gateway (\`grafbase dev\`
                      of the npm package @grafbase/cli-x86_64-unknown-linux-musl) in front of a second set of
                      subgraphs that serve unsigned calls (it cannot sign them); Linux x86-64 only, so left out of
                      the default elsewhere
  --profile <dir>     our gateway and the bare runtime on the Rust planner run under node --cpu-prof writing into
                      ours/ and bare/ there, and their top self times are printed; each --ours-also checkout writes
                      into a directory of its name; our subgraphs write into subgraphs/<name>/ (an --ours-also
                      checkout's own, with --own-subgraphs, into <its name>-subgraphs/<name>/)
  --heap <dir>        after the last scenario, heap snapshots of ours and of the bare runtime on the Rust planner are
                      written there and compared
  --ours-with=<...>   Node.js flags and NAME=value environment, given with '=' (--ours-with="--max-semi-space-size=32
                      LD_PRELOAD=libjemalloc.so.2"): our gateway runs a second time, with them instead of its start
                      script's flags (gateway/package.json) and the image's environment (jemalloc), beside the others,
                      as "ours with <...>"; --ours-with= runs it on V8's defaults and glibc's malloc
  --ours-also=<dirs>  other checkouts of this repository, comma-separated: each one's built gateway
                      (<dir>/gateway/dist/index.js, with that checkout's node_modules; build it there first) runs beside
                      ours with the same start flags and environment, named after its directory (a patch dropped, an
                      older commit)
  --own-subgraphs     each --ours-also checkout's gateway calls a seeded set of that checkout's own built subgraphs,
                      not ours: the subgraph CPU per request then compares the two checkouts' subgraphs too
  --entity-cache=<ttls>
                      our gateway runs with ENTITY_CACHE=on and ENTITY_CACHE_TTLS=<ttls> (subgraph.Type=seconds,...;
                      --entity-cache= for the @cacheControl hints alone)
  --chart <file>      where the chart goes: default ${chart} (git-ignored); --chart bench/results.svg
                      replaces the committed chart
  --help              this text`;
