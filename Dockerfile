# One image recipe for every deployable, chosen by build arguments; build from the repository root, for example:
#   docker build --build-arg WORKSPACE=@ordergraph/orders --build-arg WORKSPACE_DIR=services/orders --build-arg PORT=4002 \
#     --build-arg NODE_FLAGS='--max-semi-space-size=16 --heap-growing-percent=150' -t ordergraph/orders .
# docker-compose.yml and the Helm chart name the arguments of each of the four (users, orders, catalog, gateway).
ARG NODE_IMAGE=node:24-bookworm-slim

# Turborepo's recipe: prune the monorepo to the workspace and the packages it uses, install from the pruned lockfile.
FROM ${NODE_IMAGE} AS prune
ARG WORKSPACE
WORKDIR /app
COPY . .
RUN test -n "${WORKSPACE}" || { echo 'build argument WORKSPACE is required (e.g. @ordergraph/orders)' >&2; exit 1; }
RUN npx --yes turbo@2.11.9 prune "${WORKSPACE}" --docker

# Build with turbo, drop dev dependencies, then gather what runs: package.json, dist and node_modules of each
# workspace that built, nothing else (no sources, no tests, no test kit).
FROM ${NODE_IMAGE} AS build
ARG WORKSPACE
WORKDIR /app
COPY --from=prune /app/out/json/ ./
# npm ci's postinstall applies them (patch-package); turbo's pruned output leaves them out.
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY --from=prune /app/out/full/ ./
COPY tsconfig.base.json ./
# The root's optional dependency is the benchmark's Rust anchor (Grafbase's CLI, 100 MB): no process here runs it.
RUN npx turbo run build --filter="${WORKSPACE}" && npm prune --omit=dev --no-audit --no-fund && rm -rf node_modules/@grafbase
RUN mkdir -p /runtime && cp -a package.json node_modules /runtime/ && \
  for dir in gateway/ packages/*/ services/*/; do \
    if [ -d "${dir}dist" ]; then mkdir -p "/runtime/${dir}" && cp -a "${dir}package.json" "${dir}dist" "/runtime/${dir}"; \
      if [ -d "${dir}node_modules" ]; then cp -a "${dir}node_modules" "/runtime/${dir}"; fi; fi; \
  done

# The runtime: built code and production dependencies only, run as the unprivileged node user.
FROM ${NODE_IMAGE}
ARG WORKSPACE_DIR
ARG PORT
# The Node.js flags of the workspace's start script, which size V8's heap for the pod (docker-compose.yml passes
# them; without them node runs on its defaults); an environment variable, so a deployment can change them unrebuilt.
ARG NODE_FLAGS=""
ENV NODE_ENV=production PORT=${PORT} NODE_FLAGS=${NODE_FLAGS}
# node allocates with jemalloc: it gives back what threads free, where glibc's malloc keeps it in per-thread arenas,
# and returns pages freed a second ago rather than ten (bench/README.md, Gateway memory). IMAGE_ENV in
# scripts/deployment-files.ts; the benchmarks run ours with it too.
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/*
ENV LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=dirty_decay_ms:1000
WORKDIR /app
COPY --from=build --chown=node:node /runtime ./
# The gateway starts with the repository's supergraph (SUPERGRAPH_PATH's default); a mount replaces it without a
# rebuild, and the gateway re-reads it every SUPERGRAPH_POLL_INTERVAL ms. It takes the subgraphs' names (their
# SUBGRAPH_<NAME>_URL settings) from the supergraph it serves. The subgraphs read it not.
COPY --chown=node:node supergraph.graphql /app/
USER node
WORKDIR /app/${WORKSPACE_DIR}
EXPOSE ${PORT}
# Healthy means ready: the datastore answers (subgraphs), the supergraph is loaded (gateway).
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=20 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# exec: node replaces the shell and receives the stop signal itself.
CMD ["sh", "-c", "exec node $NODE_FLAGS dist/index.js"]
