// Grafbase's gateway as a contender in npm run bench: the Rust engine that `grafbase dev` serves (the CLI of the npm
// package @grafbase/cli-x86_64-unknown-linux-musl), configured at run time with the subgraphs' URLs and SDLs, run as
// the binary itself so that its pid is the process measured. Why `grafbase dev` and not the production
// `grafbase-gateway`, and why its subgraphs are unsigned: bench/README.md.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { readSupergraphConfig } from '@ordergraph/composition';
import { ROOT, startBinary } from './processes.js';

const PACKAGE = '@grafbase/cli-x86_64-unknown-linux-musl';

/** The CLI binary and its version, or why it cannot run here. */
export type GrafbaseBinary = { path: string; version: string } | { unavailable: string };

/** Finds the package's binary and runs its `--version`: the package holds a Linux x86-64 build only. */
export function grafbaseBinary(): GrafbaseBinary {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { unavailable: `${PACKAGE} holds a Linux x86-64 binary; this is ${process.platform} ${process.arch}` };
  let path: string;
  try {
    path = resolve(dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`)), 'grafbase');
  } catch {
    return { unavailable: `${PACKAGE} is not installed (npm ci installs it)` };
  }
  try {
    // "Grafbase CLI 0.103.0"
    const version = execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim().split(' ').at(-1)!;
    return { path, version };
  } catch (error) {
    return { unavailable: `${path} --version failed: ${(error as Error).message.split('\n')[0]}` };
  }
}

/** Where a run's Grafbase files go (git-ignored): its configuration, the SDLs it composes, the home its CLI writes to. */
export const GRAFBASE_DIR = resolve(ROOT, 'bench/out/grafbase');

/**
 * Writes grafbase.toml for subgraphs at `urls` (by name), with each subgraph's SDL as the others' supergraph is
 * composed from it (supergraph.yaml's schema files), copied beside it: `grafbase dev` watches the files it composes,
 * and an edit of a schema file during a run must not recompose the graph under load. The caller's Authorization
 * header is forwarded to every subgraph, which verifies it, as the other gateways pass it. Returns its path.
 */
export function writeGrafbaseConfig(dir: string, urls: Readonly<Record<string, string>>): string {
  mkdirSync(dir, { recursive: true });
  const lines = [
    '# Written by bench/grafbase.ts for one run of npm run bench.',
    '[[headers]]',
    'rule = "forward"',
    'name = "authorization"',
  ];
  for (const source of readSupergraphConfig()) {
    const url = urls[source.name];
    if (!url) throw new Error(`no URL for subgraph ${source.name}`);
    const sdl = resolve(dir, `${source.name}.graphql`);
    copyFileSync(source.schemaPath, sdl);
    lines.push('', `[subgraphs.${source.name}]`, `url = ${JSON.stringify(url)}`, `schema_path = ${JSON.stringify(sdl)}`);
  }
  const config = resolve(dir, 'grafbase.toml');
  writeFileSync(config, `${lines.join('\n')}\n`);
  return config;
}

/**
 * Starts `grafbase dev` on 127.0.0.1:`port` in front of the subgraphs at `urls`, once it answers on its health
 * endpoint (/health, on by default). The binary is spawned itself, with no npm, npx or shell between it and us.
 * HOME points into `dir`: the CLI unpacks its explorer's assets into ~/.grafbase.
 */
export async function startGrafbase(binary: string, urls: Readonly<Record<string, string>>, port: number, dir = GRAFBASE_DIR): Promise<ChildProcess> {
  const config = writeGrafbaseConfig(dir, urls);
  const home = resolve(dir, 'home');
  mkdirSync(home, { recursive: true });
  return startBinary('grafbase', binary, ['dev', '-c', config, '-p', String(port)], { HOME: home }, `http://127.0.0.1:${port}/health`);
}
