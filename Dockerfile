# syntax=docker/dockerfile:1
# packages/server/test/clean-clone.test.ts replays this file's COPY and RUN lines on the test machine (no
# container engine runs there) and starts the result: keep it to the instructions that test understands.

# Build stage: compile core, the server and the web console, then install the server's production
# dependencies afresh for the run stage. The SQLite driver, better-sqlite3 13, ships prebuilt Node-API
# binaries: nothing is compiled, so the image needs no build tools.
FROM node:24-bookworm-slim AS build
WORKDIR /app
# npm ci checks every workspace the lockfile lists, so each one's package.json comes along; --workspace then
# installs only what the server and the console need (and the root's dev tools: TypeScript; the console's:
# Vite, React, the SDK it bundles). --ignore-scripts skips the root `prepare` build of every package.
COPY package.json package-lock.json tsconfig.base.json ./
COPY packages/core/package.json packages/core/
COPY packages/server/package.json packages/server/
COPY packages/sdk/package.json packages/sdk/
COPY packages/openfeature/package.json packages/openfeature/
COPY packages/cli/package.json packages/cli/
COPY packages/console/package.json packages/console/
COPY packages/test-harness/package.json packages/test-harness/
RUN npm ci --workspace=@flagstaff/server --workspace=@flagstaff/console --include-workspace-root --ignore-scripts \
  --no-audit --no-fund
# Only the sources the image needs: not the tests, which need the other workspaces.
COPY packages/core/tsconfig.json packages/core/
COPY packages/core/src packages/core/src
COPY packages/server/tsconfig.json packages/server/
COPY packages/server/src packages/server/src
COPY packages/sdk/src packages/sdk/src
COPY packages/console/index.html packages/console/vite.config.mjs packages/console/
COPY packages/console/src packages/console/src
COPY scripts/build-console.mjs scripts/
# The server; the SDK's sources alone (its tsconfig also builds its tests, which need the test harness);
# then the console, bundled by Vite into packages/console/dist/web, which the server serves at /console/.
RUN npx tsc -b packages/server \
  && npx tsc packages/sdk/src/index.ts --rootDir packages/sdk --outDir packages/sdk/dist --module nodenext \
    --moduleResolution nodenext --target es2022 --lib es2022,dom --strict --skipLibCheck \
  && node scripts/build-console.mjs --force
# The run stage takes node_modules as it is: install the server's production dependencies alone, afresh
# (without the test harness's package.json, which only the console's install needed, so it is not linked).
RUN rm -rf node_modules packages/core/node_modules packages/server/node_modules packages/console/node_modules \
    packages/sdk/node_modules packages/test-harness \
  && npm ci --workspace=@flagstaff/server --include-workspace-root --omit=dev --ignore-scripts --no-audit --no-fund \
  && mkdir data

# Run stage: the server's production dependencies and compiled code, as the unprivileged `node` user.
FROM node:24-bookworm-slim
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
COPY --from=build /app/packages/console/dist/web packages/console/dist/web
COPY --from=build --chown=node:node /app/data /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM reaches node directly (exec form), so shutdown drains requests and flushes writes.
# Admin-key recovery in a running container: docker exec <container> node packages/server/dist/src/main.js admin-key create
CMD ["node", "packages/server/dist/src/main.js"]
