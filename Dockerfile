# syntax=docker/dockerfile:1
# packages/server/test/clean-clone.test.ts replays this file's COPY and RUN lines on the test machine (no
# container engine runs there) and starts the result: keep it to the instructions that test understands.

# Build stage: compile core and the server and the native SQLite driver, then drop dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
# npm ci checks every workspace the lockfile lists, so each one's package.json comes along; --workspace then
# installs only what the server needs (and the root's dev tools: TypeScript). --ignore-scripts skips the root
# `prepare` build of every client package, which are not in the image; the SQLite driver is built on its own.
COPY package.json package-lock.json tsconfig.base.json ./
COPY packages/core/package.json packages/core/
COPY packages/server/package.json packages/server/
COPY packages/sdk/package.json packages/sdk/
COPY packages/openfeature/package.json packages/openfeature/
COPY packages/cli/package.json packages/cli/
COPY packages/console/package.json packages/console/
RUN npm ci --workspace=@flagstaff/server --include-workspace-root --ignore-scripts --no-audit --no-fund \
  && npm rebuild better-sqlite3
# Only the sources the image runs: not the tests, which need the other workspaces.
COPY packages/core/tsconfig.json packages/core/
COPY packages/core/src packages/core/src
COPY packages/server/tsconfig.json packages/server/
COPY packages/server/src packages/server/src
RUN npx tsc -b packages/server \
  && npm prune --omit=dev --workspace=@flagstaff/server --include-workspace-root --no-audit --no-fund \
  && mkdir data

# Run stage: the server's production dependencies and compiled code, as the unprivileged `node` user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=file:/data/flags.db
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/packages/core/package.json packages/core/
COPY --from=build /app/packages/core/dist/src packages/core/dist/src
COPY --from=build /app/packages/server/package.json packages/server/
COPY --from=build /app/packages/server/dist/src packages/server/dist/src
COPY --from=build --chown=node:node /app/data /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM reaches node directly (exec form), so shutdown drains requests and flushes writes.
# Admin-key recovery in a running container: docker exec <container> node packages/server/dist/src/main.js admin-key create
CMD ["node", "packages/server/dist/src/main.js"]
