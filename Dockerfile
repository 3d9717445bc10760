# syntax=docker/dockerfile:1
# Multi-stage build of the operator image.
#   docker build -t flink-operator:0.1.0 .
# Stage 1 compiles TypeScript with the dev dependencies; stage 2 holds only the compiled code and the
# production dependencies and runs as a non-root user (uid 65532) on a read-only root filesystem
# (manifests/base/deployment.yaml sets readOnlyRootFilesystem; nothing is written outside /tmp).

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY test ./test
COPY bench ./bench
COPY crds ./crds
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=65532:65532 /app/package.json ./package.json
COPY --from=build --chown=65532:65532 /app/node_modules ./node_modules
COPY --from=build --chown=65532:65532 /app/dist/src ./dist/src
COPY --from=build --chown=65532:65532 /app/crds ./crds
USER 65532:65532
EXPOSE 8085
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["run"]
