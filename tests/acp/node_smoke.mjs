// The smoke session from a Node client (@agentclientprotocol/sdk): spawns `frogtui acp`, answers
// permission requests from a script (allow once, then always), prints one JSON summary line.
// Usage: node node_smoke.mjs PYTHON REPLAY_FILE REPO
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";

const [python, replay, repo] = process.argv.slice(2);
const agent = spawn(python, ["-m", "frogtui", "acp", "--model", `replay:${replay}`], { cwd: repo, stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const answers = ["allow_once", "allow_always"];
const summary = { permissions: [], updates: [], message: "" };

const app = client({ name: "frogtui-node-smoke" })
  .onRequest("session/request_permission", ({ params }) => {
    summary.permissions.push({ title: params.toolCall.title, kind: params.toolCall.kind, options: params.options.map((o) => o.kind) });
    return { outcome: { outcome: "selected", optionId: answers.shift() ?? "reject_once" } };
  })
  .onNotification("session/update", ({ params }) => {
    const update = params.update;
    summary.updates.push(update.sessionUpdate === "tool_call" ? `tool_call:${update.kind}` : update.sessionUpdate);
    if (update.sessionUpdate === "agent_message_chunk") summary.message += update.content.text;
  });

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  summary.protocolVersion = init.protocolVersion;
  const session = await ctx.request("session/new", { cwd: repo, mcpServers: [] });
  const response = await ctx.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text: "fix the failing test" }] });
  summary.stopReason = response.stopReason;
});
agent.stdin.end();
await new Promise((resolve) => agent.once("exit", resolve));
console.log(JSON.stringify(summary));
