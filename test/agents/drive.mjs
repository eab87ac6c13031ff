#!/usr/bin/env node
// Drives one real ACP agent with the official SDK client through the
// conversation an editor has with a user who is not logged in:
//
//   initialize -> session/new -> session/prompt (fails for lack of
//   credentials, or ends without a model) -> session/cancel -> EOF on the
//   agent's stdin -> its exit.
//
// Usage: node drive.mjs --cwd DIR [--timeout-ms MS] [--eof-ms MS] -- CMD [ARGS...]
//
// An agent still running --eof-ms after EOF is killed (claude-agent-acp
// and codex-acp wait for more input); that is recorded, not compared.
//
// CMD is the agent, run directly or behind `loki-supervise session --`.
// Prints one JSON object: each step's outcome (the result's keys and the
// values that do not vary, or the error's code and message) with what is
// inherently variable normalised (session ids, uuids, timestamps, the
// cwd and HOME), the exit, and the agent's stderr tail (not compared).
import * as acp from "@zed-industries/agent-client-protocol";
import { spawn } from "node:child_process";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
const opts = { cwd: process.cwd(), timeoutMs: 30000, eofMs: 5000 };
for (let i = 0; i < sep; i += 2) {
  if (argv[i] === "--cwd") opts.cwd = argv[i + 1];
  if (argv[i] === "--timeout-ms") opts.timeoutMs = Number(argv[i + 1]);
  if (argv[i] === "--eof-ms") opts.eofMs = Number(argv[i + 1]);
}
const cmd = argv.slice(sep + 1);

const home = process.env.HOME ?? "";
function norm(s) {
  if (typeof s !== "string") return s;
  let out = s;
  for (const [v, name] of [[opts.cwd, "<cwd>"], [home, "<home>"]]) {
    if (v && v !== "/") out = out.split(v).join(name);
  }
  return out
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>")
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?/g, "<time>")
    .replace(/\b\d{10,}\b/g, "<n>");
}

// A group of its own: codex-acp's npm wrapper leaves its binary holding
// stdout when only the wrapper is killed.
const child = spawn(cmd[0], cmd.slice(1), { stdio: ["pipe", "pipe", "pipe"], env: process.env, detached: true });
const killAll = () => {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {}
};
const stderr = [];
child.stderr.on("data", (c) => stderr.push(c));
child.stdin.on("error", () => {});
const closed = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
const fromAgent = new ReadableStream({
  start(c) {
    child.stdout.on("data", (chunk) => c.enqueue(new Uint8Array(chunk)));
    child.stdout.on("end", () => c.close());
  },
});
const toAgent = new WritableStream({
  write(chunk) {
    return new Promise((resolve) => child.stdin.write(chunk, () => resolve()));
  },
});

const steps = [];
const updates = [];
const client = {
  async sessionUpdate(n) {
    updates.push(n.update.sessionUpdate);
  },
  async requestPermission() {
    return { outcome: { outcome: "cancelled" } };
  },
  async readTextFile() {
    throw acp.RequestError.methodNotFound("fs/read_text_file");
  },
  async writeTextFile() {
    throw acp.RequestError.methodNotFound("fs/write_text_file");
  },
};
const conn = new acp.ClientSideConnection(() => client, acp.ndJsonStream(toAgent, fromAgent));

function timeout(ms) {
  let t;
  const p = new Promise((_, reject) => (t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  p.clear = () => clearTimeout(t);
  return p;
}

// step records one request's outcome; an agent that exits fails it.
async function step(name, fn, shape) {
  const limit = timeout(opts.timeoutMs);
  try {
    const res = await Promise.race([fn(), limit, closed.then((e) => Promise.reject(new Error(`agent exited (${e.code ?? e.signal})`)))]);
    steps.push({ step: name, ok: shape(res) });
    return res;
  } catch (err) {
    const e = { step: name, error: { code: err?.code ?? null, message: norm(String(err?.message ?? err)) } };
    if (err?.data !== undefined) e.error.data = JSON.parse(norm(JSON.stringify(err.data)));
    steps.push(e);
    return null;
  } finally {
    limit.clear();
  }
}

const init = await step(
  "initialize",
  () => conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } }),
  (r) => ({ protocolVersion: r.protocolVersion, authMethods: (r.authMethods ?? []).map((m) => m.id).sort() }),
);
let sessionId = null;
if (init) {
  const s = await step("session/new", () => conn.newSession({ cwd: opts.cwd, mcpServers: [] }), (r) => ({ sessionId: r.sessionId ? "<session-id>" : null }));
  sessionId = s?.sessionId ?? null;
}
if (sessionId) {
  await step("session/prompt", () => conn.prompt({ sessionId, prompt: [{ type: "text", text: "Say hello." }] }), (r) => ({ stopReason: r.stopReason }));
  await step("session/cancel", () => conn.cancel({ sessionId }), () => ({}));
}
child.stdin.end();
const limit = timeout(opts.eofMs);
let exit;
try {
  exit = await Promise.race([closed, limit]);
} catch {
  killAll();
  exit = { ...(await closed), killed: "no exit after EOF" };
} finally {
  limit.clear();
}
const tail = Buffer.concat(stderr).toString("utf8").split("\n").filter(Boolean).slice(-5).map(norm);
killAll(); // what it left behind
process.stdout.write(JSON.stringify({ steps, exit, stderrTail: tail }) + "\n");
process.exit(0);
