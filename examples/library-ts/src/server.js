#!/usr/bin/env node
// `node src/server.js [--port N]`: streamable HTTP at http://127.0.0.1:N/mcp with --port, stdio without.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

import { buildServer } from "./library.js";

const MCP_PATH = "/mcp";
const MAX_BODY_BYTES = 4 * 1024 * 1024;

function jsonRpcError(res, status, code, message) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function serveHttp(port) {
  const host = "127.0.0.1";
  const allowedHosts = [`${host}:${port}`, `localhost:${port}`];
  const sessions = new Map(); // session id -> transport

  const http = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", `http://${host}:${port}`);
    if (url.pathname !== MCP_PATH) {
      res.writeHead(404).end();
      return;
    }
    try {
      const sessionId = req.headers["mcp-session-id"];
      const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (known) {
        await known.handleRequest(req, res);
        return;
      }
      if (req.method !== "POST" || sessionId) {
        jsonRpcError(res, sessionId ? 404 : 400, -32000, sessionId ? "Session not found" : "Missing session ID");
        return;
      }
      let body;
      try {
        body = await readJson(req);
      } catch (error) {
        jsonRpcError(res, 400, -32700, `Parse error: ${error.message}`);
        return;
      }
      if (!isInitializeRequest(body)) {
        // Also what a modern client's server/discover probe gets: this server speaks the legacy era only.
        jsonRpcError(res, 400, -32600, "Bad Request: no valid session ID provided");
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
        enableDnsRebindingProtection: true,
        allowedHosts,
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await buildServer().connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (error) {
      console.error("request failed:", error);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    }
  });

  http.listen(port, host, () => console.error(`library-ts: streamable HTTP at http://${host}:${port}${MCP_PATH}`));
  const stop = () => {
    for (const transport of sessions.values()) transport.close().catch(() => {});
    http.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

async function serveStdio() {
  await buildServer().connect(new StdioServerTransport());
}

const { values } = parseArgs({ options: { port: { type: "string" } } });
if (values.port === undefined) {
  await serveStdio();
} else {
  const port = Number.parseInt(values.port, 10);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    console.error(`--port: expected a port number, got ${JSON.stringify(values.port)}`);
    process.exit(2);
  }
  serveHttp(port);
}
