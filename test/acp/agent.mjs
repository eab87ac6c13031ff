#!/usr/bin/env node
// A small but real ACP agent built on the official SDK
// (@zed-industries/agent-client-protocol). It speaks newline-delimited
// JSON-RPC on stdin/stdout and is fully deterministic except for the session
// id, so two runs of the same client produce the same transcript: that is
// what lets the test prove loki changes nothing between client and agent.
//
// Prompts select a scenario by their first text block:
//   "stream"  thought, plan, message chunks (one large, multi-byte UTF-8),
//             a tool call that asks the client for permission, its update,
//             and a chunk echoing the sha256 of every prompt block it got;
//             ends with stopReason "end_turn".
//   "cancel"  three chunks, then waits for session/cancel (bounded: after
//             --cancel-wait-ms it gives up with "end_turn", which the client
//             treats as a failure); on cancel one last chunk, then
//             stopReason "cancelled".
//
// On stdin EOF the agent sends one more message, the extension notification
// _loki/stdin_closed (output after EOF must still arrive), and prints one
// line to stderr with the byte count and sha256 of everything it read and
// wrote, so the client can check that loki delivered the same bytes in both
// directions, and the length (never the value) of ACP_TEST_TOKEN when set.
// Then it exits with --exit-code (default 0).
import * as acp from "@zed-industries/agent-client-protocol";
import { createHash, randomUUID } from "node:crypto";

const args = parseArgs(process.argv.slice(2));

// Tap counts and hashes the bytes crossing one direction of the wire.
class Tap {
  constructor() {
    this.bytes = 0;
    this.hash = createHash("sha256");
  }
  add(chunk) {
    this.bytes += chunk.byteLength;
    this.hash.update(chunk);
  }
  report() {
    return `${this.bytes} bytes (sha256 ${this.hash.digest("hex")})`;
  }
}

const readTap = new Tap();
const writeTap = new Tap();
let stdinEnded;
const eof = new Promise((resolve) => (stdinEnded = resolve));

// stdin as a web stream whose end resolves eof; every byte is tapped.
const input = new ReadableStream({
  start(controller) {
    process.stdin.on("data", (chunk) => {
      readTap.add(chunk);
      controller.enqueue(new Uint8Array(chunk));
    });
    process.stdin.on("end", () => {
      controller.close();
      stdinEnded();
    });
    process.stdin.on("error", (err) => controller.error(err));
  },
});

// stdout as a web stream; a write resolves once node has handed the bytes
// to the pipe, so nothing is pending when the agent exits.
const output = new WritableStream({
  write(chunk) {
    writeTap.add(chunk);
    return new Promise((resolve, reject) =>
      process.stdout.write(chunk, (err) => (err ? reject(err) : resolve())),
    );
  },
});

class Agent {
  constructor(conn) {
    this.conn = conn;
    this.sessions = new Map();
  }

  async initialize() {
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
      },
      authMethods: [],
    };
  }

  async newSession() {
    // Random like a real agent's: the client normalises it.
    const sessionId = randomUUID();
    this.sessions.set(sessionId, { abort: null });
    return { sessionId };
  }

  async authenticate() {
    return {};
  }

  async prompt(params) {
    const session = this.sessions.get(params.sessionId);
    if (!session) {
      throw acp.RequestError.invalidParams({ sessionId: params.sessionId });
    }
    session.abort?.abort();
    session.abort = new AbortController();
    const signal = session.abort.signal;
    try {
      const first = params.prompt.find((b) => b.type === "text")?.text ?? "";
      if (first === "stream") {
        return await this.stream(params);
      }
      if (first === "cancel") {
        return await this.untilCancelled(params.sessionId, signal);
      }
      throw acp.RequestError.invalidParams({ scenario: first });
    } finally {
      session.abort = null;
    }
  }

  async cancel(params) {
    this.sessions.get(params.sessionId)?.abort?.abort();
  }

  update(sessionId, update) {
    return this.conn.sessionUpdate({ sessionId, update });
  }

  chunk(sessionId, text) {
    return this.update(sessionId, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text },
    });
  }

  async stream({ sessionId, prompt }) {
    await this.update(sessionId, {
      sessionUpdate: "agent_thought_chunk",
      content: { type: "text", text: "Reading the request." },
    });
    await this.update(sessionId, {
      sessionUpdate: "plan",
      entries: [
        { content: "inspect the file", priority: "high", status: "in_progress" },
        { content: "report", priority: "medium", status: "pending" },
      ],
    });
    await this.chunk(sessionId, "Looking at the project");
    // Large and multi-byte: crosses many pipe reads and splits UTF-8
    // sequences across read boundaries somewhere along the way.
    await this.chunk(sessionId, largeText(256 * 1024));
    await this.update(sessionId, {
      sessionUpdate: "tool_call",
      toolCallId: "call_1",
      title: "Edit config.json",
      kind: "edit",
      status: "pending",
      locations: [{ path: "/project/config.json" }],
      rawInput: { path: "/project/config.json", content: "{\"ok\":true}" },
    });
    const permission = await this.conn.requestPermission({
      sessionId,
      toolCall: { toolCallId: "call_1", title: "Edit config.json", kind: "edit", status: "pending" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    const allowed =
      permission.outcome.outcome === "selected" && permission.outcome.optionId === "allow";
    await this.update(sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId: "call_1",
      status: allowed ? "completed" : "failed",
      rawOutput: { allowed },
    });
    const digests = prompt.map((b) =>
      createHash("sha256").update(b.type === "text" ? b.text : JSON.stringify(b)).digest("hex"),
    );
    await this.chunk(sessionId, `prompt sha256: ${digests.join(" ")}`);
    return { stopReason: "end_turn" };
  }

  async untilCancelled(sessionId, signal) {
    for (let i = 1; i <= 3; i++) {
      await this.chunk(sessionId, `working ${i}/3`);
    }
    const cancelled = await abortedWithin(signal, args.cancelWaitMs);
    if (!cancelled) {
      await this.chunk(sessionId, "no cancel arrived");
      return { stopReason: "end_turn" };
    }
    await this.chunk(sessionId, "stopping after 3 chunks");
    return { stopReason: "cancelled" };
  }
}

// abortedWithin resolves true when signal aborts, false after ms.
function abortedWithin(signal, ms) {
  if (signal.aborted) {
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

// largeText is at least n UTF-16 units mixing ASCII, 2-, 3- and 4-byte
// UTF-8 and characters JSON must escape, the same on every run. Whole
// repeats only, so no surrogate pair is ever cut in half.
function largeText(n) {
  const alphabet = "loki é ü ĸ 漢字 🦊 \" \\ \t \n ";
  return alphabet.repeat(Math.ceil(n / alphabet.length));
}

function parseArgs(argv) {
  const out = { exitCode: 0, cancelWaitMs: 60000 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case "--exit-code":
        out.exitCode = Number.parseInt(v, 10);
        i++;
        break;
      case "--cancel-wait-ms":
        out.cancelWaitMs = Number.parseInt(v, 10);
        i++;
        break;
      default:
        process.stderr.write(`agent: unknown argument ${argv[i]}\n`);
        process.exit(2);
    }
  }
  return out;
}

const conn = new acp.AgentSideConnection((c) => new Agent(c), acp.ndJsonStream(output, input));

// On EOF the client is done (it closes stdin only after its last response
// arrived). One last extension notification proves that output written
// after stdin closed still reaches the client; the SDK resolves it once the
// bytes are in the pipe.
await eof;
await conn.extNotification("loki/stdin_closed", { readBytes: readTap.bytes });
process.stderr.write(`agent: stdin closed; read ${readTap.report()}, wrote ${writeTap.report()}\n`);
// Proves an --env variable arrived without ever printing its value.
if (process.env.ACP_TEST_TOKEN !== undefined) {
  process.stderr.write(`agent: ACP_TEST_TOKEN has ${Buffer.byteLength(process.env.ACP_TEST_TOKEN)} bytes\n`);
}
process.exitCode = args.exitCode;
