# One image for every service; SERVICES picks which one a container runs.
# Multi-stage: build with dev dependencies, run compiled JS with production dependencies only, as a non-root user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/mcp-stdio/package.json packages/mcp-stdio/package.json
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/mcp-stdio/package.json packages/mcp-stdio/package.json
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/packages/mcp-stdio ./packages/mcp-stdio
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# SIGTERM reaches node directly (exec form): in-flight calls finish, pools close.
CMD ["node", "dist/src/main.js"]
