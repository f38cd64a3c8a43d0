# One image for every service; SERVICES picks which one a container runs.
# Multi-stage: compile with dev dependencies, then run the compiled JavaScript with production
# dependencies only (no TypeScript, tsx or esbuild at run time), as the non-root `node` user.
# BASE_IMAGE: any Node 24 (LTS) image with npm and a `node` user (uid 1000). Machines without a registry
# build a local one first: scripts/containers/build-local-images.sh.
ARG BASE_IMAGE=node:24-bookworm-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/mcp-stdio/package.json packages/mcp-stdio/package.json
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${BASE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
# The whole stdio package as published: the gateway packs it for GET /downloads (cached in DATA_DIR).
COPY --from=build /app/packages/mcp-stdio/package.json /app/packages/mcp-stdio/README.md /app/packages/mcp-stdio/LICENSE /app/packages/mcp-stdio/server.json ./packages/mcp-stdio/
COPY --from=build /app/packages/mcp-stdio/bin ./packages/mcp-stdio/bin
COPY --from=build /app/packages/mcp-stdio/lib ./packages/mcp-stdio/lib
COPY --from=build /app/dist ./dist
# Operator tools, on PATH: the ledger audit and the admin CLI (same as npm run audit:ledger / admin).
RUN printf '#!/bin/sh\nexec node /app/dist/scripts/audit-ledger.js "$@"\n' > /usr/local/bin/audit-ledger \
 && printf '#!/bin/sh\nexec node /app/dist/scripts/admin.js "$@"\n' > /usr/local/bin/market-admin \
 && chmod 755 /usr/local/bin/audit-ledger /usr/local/bin/market-admin \
 && mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# SIGTERM reaches node directly (exec form): in-flight calls finish, pools close.
CMD ["node", "dist/src/main.js"]
