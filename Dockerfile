# One image for both processes:
#   gateway (default):  docker run -p 8000:8000 dataagent
#   worker:             docker run dataagent node dist/worker.js
# Configuration comes from DATAAGENT_* / OPENAI_* environment variables (see README.md).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY scripts/bundle.mjs ./scripts/
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
# tini as PID 1: forwards SIGTERM to node (graceful drain) and reaps the shell tool's children.
# bubblewrap and slirp4netns: the worker's sandbox for users' commands and stdio MCP servers (it
# needs unprivileged user namespaces in the container; without them the worker says so).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini bubblewrap slirp4netns \
  && rm -rf /var/lib/apt/lists/*
# Users' workspaces (file and shell tools) live here; mount a volume shared by the workers.
RUN mkdir -p /data/workspaces && chown node:node /data/workspaces
WORKDIR /app
ENV NODE_ENV=production \
    DATAAGENT_HOST=0.0.0.0 \
    DATAAGENT_PORT=8000
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The web UI's static files (served at / from the repository layout, beside dist/).
COPY --from=build --chown=node:node /app/apps/gateway/web ./apps/gateway/web
USER node
EXPOSE 8000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/gateway.js"]
