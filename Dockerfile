# One Dockerfile for every deployable; pick it with --build-arg SERVICE=<workspace dir>, for example
#   docker build --build-arg SERVICE=services/orders -t ordergraph/orders .
#   docker build --build-arg SERVICE=gateway -t ordergraph/gateway .
# Each image holds only its own workspace and the shared packages it depends on, built with turbo.
FROM node:20-bookworm-slim AS build
WORKDIR /app
ARG SERVICE
COPY package.json package-lock.json turbo.json tsconfig.base.json ./
COPY packages ./packages
COPY services ./services
COPY gateway ./gateway
RUN npm ci --no-audit --no-fund
RUN npx turbo run build --filter="./${SERVICE}..." \
 && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
ARG SERVICE
COPY --from=build /app /app
COPY supergraph.graphql ./supergraph.graphql
WORKDIR /app/${SERVICE}
USER node
CMD ["node", "dist/index.js"]
