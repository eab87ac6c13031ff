#!/usr/bin/env node
// An ACP client built on the official SDK (@zed-industries/agent-client-protocol)
// that drives agent.mjs through one fixed conversation and records it:
//
//   initialize -> session/new -> session/prompt "stream" (streamed
//   session/update notifications and a session/request_permission the client
//   answers) -> session/prompt "cancel" (the client sends session/cancel after
//   the third update; the agent must answer stopReason "cancelled") -> the
//   client closes the agent's stdin, reads the agent's last notification
//   (sent after EOF) and waits for it to exit.
//
// Usage:
//   node client.mjs [--transcript FILE] [--stderr FILE] [--expect-exit N]
//                   [--timeout-ms MS] -- CMD [ARGS...]
//
// CMD is the agent: `node agent.mjs` directly, or the same behind
// `loki-supervise session --`. The transcript is every JSON-RPC line in the
// order the client saw it, "> " for client to agent, "< " for agent to
// client, byte for byte as on the wire except that the session id (random)
// is replaced by <session-id>. The agent's stderr is saved with its wire
// digests replaced by placeholders where they match the client's own.
// Figures and checks go to stdout as one JSON object; the exit code is 0
// only when every check passed.
import * as acp from "@zed-industries/agent-client-protocol";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";

const args = parseArgs(process.argv.slice(2));
const started = performance.now();
const elapsed = () => Math.round((performance.now() - started) * 10) / 10;

// Lines splits a byte stream into newline-terminated lines without decoding
// partial UTF-8, and hashes every byte it is given.
class Lines {
  constructor(onLine) {
    this.pending = Buffer.alloc(0);
    this.onLine = onLine;
    this.bytes = 0;
    this.hash = createHash("sha256");
  }
  add(chunk) {
    this.bytes += chunk.byteLength;
    this.hash.update(chunk);
    let buf = Buffer.concat([this.pending, chunk]);
    let nl;
    while ((nl = buf.indexOf(0x0a)) >= 0) {
      this.onLine(buf.subarray(0, nl).toString("utf8"));
      buf = buf.subarray(nl + 1);
    }
    this.pending = buf;
  }
  view() {
    return { bytes: this.bytes, sha256: this.hash.digest("hex"), trailing: this.pending.length };
  }
}

const transcript = [];
const sent = new Lines((line) => transcript.push("> " + line));
const received = new Lines((line) => transcript.push("< " + line));
const failures = [];
const check = (ok, what) => ok || failures.push(what);

const child = spawn(args.cmd[0], args.cmd.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
const stderrChunks = [];
child.stderr.on("data", (c) => stderrChunks.push(c));
// A write after the agent died must fail the run, not crash the client.
child.stdin.on("error", (err) => failures.push(`agent stdin: ${err.code ?? err.message}`));
const closed = new Promise((resolve) =>
  child.on("close", (code, signal) => resolve({ code, signal })),
);
const spawnError = new Promise((_, reject) => child.on("error", reject));

const fromAgent = new ReadableStream({
  start(controller) {
    child.stdout.on("data", (chunk) => {
      received.add(chunk);
      controller.enqueue(new Uint8Array(chunk));
    });
    child.stdout.on("end", () => controller.close());
  },
});
const toAgent = new WritableStream({
  write(chunk) {
    sent.add(Buffer.from(chunk));
    return new Promise((resolve) => child.stdin.write(chunk, () => resolve()));
  },
});

// What the client saw during each prompt, for the checks.
const seen = { phase: "", updates: { stream: 0, cancel: 0 }, permissions: 0, texts: [] };
let connection;
let sessionId = "";

const client = {
  async sessionUpdate(n) {
    const phase = seen.phase;
    seen.updates[phase] = (seen.updates[phase] ?? 0) + 1;
    if (n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text") {
      seen.texts.push(n.update.content.text);
    }
    if (phase === "cancel" && seen.updates.cancel === 3) {
      await connection.cancel({ sessionId: n.sessionId });
    }
  },
  async requestPermission(req) {
    seen.permissions++;
    const allow = req.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  },
};

async function converse() {
  connection = new acp.ClientSideConnection(() => client, acp.ndJsonStream(toAgent, fromAgent));
  const init = await connection.initialize({
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const initMs = elapsed();
  check(init.protocolVersion === acp.PROTOCOL_VERSION, `protocolVersion ${init.protocolVersion}`);
  const session = await connection.newSession({ cwd: "/workspace", mcpServers: [] });
  sessionId = session.sessionId;
  check(typeof sessionId === "string" && sessionId.length > 0, "session id");

  seen.phase = "stream";
  const big = bigPrompt(128 * 1024);
  const streamed = await connection.prompt({
    sessionId,
    prompt: [
      { type: "text", text: "stream" },
      { type: "text", text: big },
    ],
  });
  check(streamed.stopReason === "end_turn", `stream stopReason ${streamed.stopReason}`);
  check(seen.updates.stream >= 5, `stream: ${seen.updates.stream} updates, want >= 5`);
  check(seen.permissions === 1, `${seen.permissions} permission requests, want 1`);
  const digest = (s) => createHash("sha256").update(s).digest("hex");
  const echo = `prompt sha256: ${digest("stream")} ${digest(big)}`;
  check(seen.texts.includes(echo), "agent's digest of the prompt differs from the client's");

  seen.phase = "cancel";
  const cancelled = await connection.prompt({ sessionId, prompt: [{ type: "text", text: "cancel" }] });
  check(cancelled.stopReason === "cancelled", `cancel stopReason ${cancelled.stopReason}`);
  check(seen.updates.cancel === 4, `cancel: ${seen.updates.cancel} updates, want 4`);
  return { initMs, stopReasons: [streamed.stopReason, cancelled.stopReason] };
}

// bigPrompt is n UTF-16 units of multi-byte text, the same on every run.
function bigPrompt(n) {
  const alphabet = "prompt ñ ø ∑ 日本 🐙 \u2028 \" ";
  return alphabet.repeat(Math.ceil(n / alphabet.length));
}

// deadline rejects after ms unless cleared; it keeps the process alive, so
// a conversation that stalls ends here rather than in an empty event loop.
function deadline(ms) {
  let timer;
  const p = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no end within ${ms} ms`)), ms);
  });
  p.clear = () => clearTimeout(timer);
  return p;
}

async function main() {
  let conv = {};
  let exit = { code: null, signal: null };
  const limit = deadline(args.timeoutMs);
  // An agent that exits mid-conversation leaves the SDK's requests pending
  // forever: its exit is a failure of its own.
  const early = closed.then((e) => {
    throw new Error(`agent ended mid-conversation (exit ${e.code}, signal ${e.signal})`);
  });
  try {
    conv = await Promise.race([converse(), early, spawnError, limit]);
    // The client ends the session the way an editor does: EOF on stdin.
    child.stdin.end();
    exit = await Promise.race([closed, limit]);
  } catch (err) {
    failures.push(`conversation: ${err?.message ?? JSON.stringify(err)}`);
    child.kill("SIGKILL");
    exit = await closed;
  } finally {
    limit.clear();
  }
  early.catch(() => {});
  const totalMs = elapsed();
  check(exit.code === args.expectExit, `agent exit ${exit.code} signal ${exit.signal}, want ${args.expectExit}`);

  const clientView = { sent: sent.view(), received: received.view() };
  check(clientView.sent.trailing === 0 && clientView.received.trailing === 0, "unterminated line");
  const agentStderr = Buffer.concat(stderrChunks);
  const agentView = parseAgentView(agentStderr.toString("utf8"));
  check(agentView !== null, "agent printed no wire report on stderr");
  if (agentView) {
    // What the agent read must be what the client wrote, and the reverse.
    check(agentView.read.bytes === clientView.sent.bytes && agentView.read.sha256 === clientView.sent.sha256,
      "bytes the agent read differ from bytes the client wrote");
    check(agentView.wrote.bytes === clientView.received.bytes && agentView.wrote.sha256 === clientView.received.sha256,
      "bytes the client read differ from bytes the agent wrote");
  }

  check((transcript.at(-1) ?? "").includes('"method":"_loki/stdin_closed"'),
    "the agent's message written after stdin EOF did not arrive last");

  const normalise = (s) => (sessionId ? s.split(sessionId).join("<session-id>") : s);
  if (args.transcript) {
    writeFileSync(args.transcript, normalise(transcript.join("\n") + "\n"), { mode: 0o600 });
  }
  if (args.stderr) {
    // The agent's digests cover the random session id; a digest equal to
    // the client's own becomes a placeholder, a differing one stays.
    const text = agentStderr.toString("utf8")
      .split(clientView.sent.sha256).join("<sha256 of the bytes the client sent>")
      .split(clientView.received.sha256).join("<sha256 of the bytes the client received>");
    writeFileSync(args.stderr, text, { mode: 0o600 });
  }
  const summary = {
    ok: failures.length === 0,
    failures,
    exitCode: exit.code,
    signal: exit.signal,
    initMs: conv.initMs ?? null,
    totalMs,
    stopReasons: conv.stopReasons ?? [],
    updates: seen.updates,
    messages: {
      sent: transcript.filter((l) => l.startsWith(">")).length,
      received: transcript.filter((l) => l.startsWith("<")).length,
    },
    bytes: { sent: clientView.sent.bytes, received: clientView.received.bytes },
  };
  process.stdout.write(JSON.stringify(summary) + "\n");
  process.exitCode = summary.ok ? 0 : 1;
}

// parseAgentView reads the agent's one-line report of its side of the wire.
function parseAgentView(text) {
  const m = /read (\d+) bytes \(sha256 ([0-9a-f]{64})\), wrote (\d+) bytes \(sha256 ([0-9a-f]{64})\)/.exec(text);
  if (!m) {
    return null;
  }
  return {
    read: { bytes: Number(m[1]), sha256: m[2] },
    wrote: { bytes: Number(m[3]), sha256: m[4] },
  };
}

function parseArgs(argv) {
  const out = { transcript: "", stderr: "", expectExit: 0, timeoutMs: 60000, cmd: [] };
  const dash = argv.indexOf("--");
  if (dash < 0 || dash === argv.length - 1) {
    process.stderr.write("usage: client.mjs [--transcript F] [--stderr F] [--expect-exit N] [--timeout-ms MS] -- CMD [ARGS...]\n");
    process.exit(2);
  }
  out.cmd = argv.slice(dash + 1);
  const flags = argv.slice(0, dash);
  for (let i = 0; i < flags.length; i += 2) {
    const v = flags[i + 1];
    switch (flags[i]) {
      case "--transcript": out.transcript = v; break;
      case "--stderr": out.stderr = v; break;
      case "--expect-exit": out.expectExit = Number.parseInt(v, 10); break;
      case "--timeout-ms": out.timeoutMs = Number.parseInt(v, 10); break;
      default:
        process.stderr.write(`client: unknown flag ${flags[i]}\n`);
        process.exit(2);
    }
  }
  return out;
}

await main();
