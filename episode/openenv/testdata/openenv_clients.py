"""Drive toolenv's /openenv with OpenEnv's own client code, unmodified.

Run by TestOpenEnvClients (episode/openenv/pyclients_test.go):

    python3 openenv_clients.py OPENENV_SRC WEBSOCKETS_DIR BASE_URL PLAN.json

OPENENV_SRC is OpenEnv's src folder (testdata/openenv/src),
WEBSOCKETS_DIR the folder holding Debian's websockets 10.4 package,
BASE_URL the episodes' base URL (http://127.0.0.1:PORT/openenv), PLAN a
JSON list of tasks ({collection, task_id, gold: [{name, arguments,
label}], answer_labels}). It prints one JSON object: for each mode, how
many episodes were played and how many reached reward 1, and the
problems met.

What is shimmed, and only that:

  - OpenEnv's package __init__ files of openenv, openenv.core and
    openenv.core.env_server import its server side (FastAPI, fastmcp,
    gradio), which a client does not need: those three packages are
    registered as empty namespace modules pointing at their real folders,
    so that the client modules (env_client, generic_client, mcp_client,
    sync_client, client_types, utils, env_server.types,
    env_server.mcp_types) and cli/_validation.py load from OpenEnv's files
    as they are.
  - env_client.py imports `connect` from websockets.asyncio.client
    (websockets >= 13); Debian ships websockets 10.4, whose client is
    websockets.client.connect with the same call (uri, open_timeout=,
    max_size=) and the same connection methods (send, recv, close). The
    module websockets.asyncio.client is registered as an alias of 10.4's
    websockets.client: the transport only, no OpenEnv logic.
"""

import asyncio
import importlib
import importlib.util
import json
import os
import re
import sys
import tempfile
import traceback
import types


def load_openenv(src, ws_dir):
    # websockets 10.4 alone from Debian's folder (not the rest of it).
    link = tempfile.mkdtemp(prefix="openenv-ws-")
    os.symlink(os.path.join(ws_dir, "websockets"), os.path.join(link, "websockets"))
    sys.path.insert(0, link)
    import websockets.client as legacy  # 10.4

    aio = types.ModuleType("websockets.asyncio")
    aio.__path__ = []
    client = types.ModuleType("websockets.asyncio.client")
    client.connect = legacy.connect
    client.ClientConnection = legacy.WebSocketClientProtocol
    sys.modules["websockets.asyncio"] = aio
    sys.modules["websockets.asyncio.client"] = client

    for name in ("openenv", "openenv.core", "openenv.core.env_server", "openenv.cli"):
        m = types.ModuleType(name)
        m.__path__ = [os.path.join(src, *name.split("."))]
        sys.modules[name] = m
    mods = {}
    for name in ("openenv.core.generic_client", "openenv.core.mcp_client", "openenv.core.env_server.types",
                 "openenv.core.env_server.mcp_types", "openenv.cli._validation"):
        mods[name.rsplit(".", 1)[1]] = importlib.import_module(name)
    return mods


REF = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)\$")


def relabel(value, mapping):
    """Rewrites $LABEL$ references to the labels the server assigned."""
    if isinstance(value, str):
        return REF.sub(lambda m: "$" + mapping.get(m.group(1), m.group(1)) + "$", value)
    if isinstance(value, list):
        return [relabel(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: relabel(v, mapping) for k, v in value.items()}
    return value


class Run:
    def __init__(self, mods, base, plan):
        self.m, self.base, self.plan = mods, base, plan
        self.out = {}
        self.problems = []

    def count(self, mode, rewarded):
        c = self.out.setdefault(mode, {"episodes": 0, "rewarded": 0})
        c["episodes"] += 1
        c["rewarded"] += 1 if rewarded else 0

    def problem(self, mode, task, what):
        if len(self.problems) < 40:
            self.problems.append(f"{mode} {task['task_id']}: {what}")

    def check_serialized(self, mode, task, data, reset):
        """A WebSocket observation's data as OpenEnv's HTTP models read it."""
        t = self.m["types"]
        try:
            (t.ResetResponse if reset else t.StepResponse).model_validate(data)
        except Exception as e:  # pydantic.ValidationError
            self.problem(mode, task, f"not a valid {'ResetResponse' if reset else 'StepResponse'}: {e}")

    # GenericEnvClient over the WebSocket, labelled calls.
    async def generic(self, task, fmt):
        mode = "generic_" + fmt
        env = self.m["generic_client"].GenericEnvClient(base_url=self.base)
        async with env:
            raw = await env._send_and_receive({"type": "reset", "data": {"collection": task["collection"], "task_id": task["task_id"], "tool_format": fmt}})
            self.check_serialized(mode, task, raw["data"], True)
            r = await env.reset(collection=task["collection"], task_id=task["task_id"], tool_format=fmt)
            obs = r.observation
            key = "tools" if fmt == "mcp" else "openai_tools"
            if not obs.get(key) or not obs.get("query"):
                self.problem(mode, task, f"reset observation without {key} or query: {sorted(obs)}")
            for g in task["gold"]:
                raw = await env._send_and_receive({"type": "step", "data": {"type": "call_tool", "tool_name": g["name"], "arguments": g["arguments"], "label": g["label"]}})
                self.check_serialized(mode, task, raw["data"], False)
                res = raw["data"]["observation"].get("result") or {}
                if res.get("status") != "ok":
                    self.problem(mode, task, f"{g['name']}: {res}")
            st = await env.state()
            self.m["types"].State.model_validate(st)
            r = await env.step({"type": "final_answer", "labels": task["answer_labels"]})
            self.count(mode, r.reward == 1 and r.done)
            if r.reward != 1:
                self.problem(mode, task, f"final reward {r.reward}: {r.observation.get('outcome')}")

    # MCPToolClient: no labels given, the final answer names the labels
    # the server assigned (result_1, result_2, ...).
    async def mcptool(self, task, fmt):
        mode = "mcptool_" + fmt
        mc, mt = self.m["mcp_client"], self.m["mcp_types"]
        env = mc.MCPToolClient(base_url=self.base)
        async with env:
            r = await env.reset(collection=task["collection"], task_id=task["task_id"], tool_format=fmt)
            obs = r.observation
            if fmt == "mcp":
                if not isinstance(obs, mt.ListToolsObservation) or not obs.tools or any(not t.name for t in obs.tools):
                    self.problem(mode, task, f"reset: not a tool list with names: {obs!r:.300}")
            else:
                if isinstance(obs, mt.ListToolsObservation):
                    self.problem(mode, task, f"reset read as a tool list: {obs!r:.300}")
            if obs.metadata.get("task", {}).get("query") in (None, ""):
                self.problem(mode, task, f"reset: the query is not in the metadata: {obs.metadata!r:.300}")
            tools = await env.list_tools()
            names = [t.name for t in tools]
            if "submit_answer" not in names or any(not n for n in names):
                self.problem(mode, task, f"list_tools: {names}")
            mapping = {}
            for i, g in enumerate(task["gold"], 1):
                args = relabel(g["arguments"], mapping)
                data = await env.call_tool(g["name"], **args)
                mapping[g["label"]] = f"result_{i}"
                if isinstance(data, dict) and "label" in data and data["label"] != f"result_{i}":
                    self.problem(mode, task, f"{g['name']}: the result's label {data['label']}, want result_{i}")
            labels = [mapping.get(l, l) for l in task["answer_labels"]]
            data = await env.call_tool("submit_answer", labels=labels)
            ok = isinstance(data, dict) and data.get("reward") == 1 and data.get("done") is True
            self.count(mode, ok)
            if not ok:
                self.problem(mode, task, f"submit_answer({labels}): {data!r:.300}")

    # The WebSocket's mcp message (JSON-RPC tools/list and tools/call).
    async def ws_mcp(self, task):
        mode = "ws_mcp"
        mt = self.m["mcp_types"]
        env = self.m["generic_client"].GenericEnvClient(base_url=self.base)
        async with env:
            await env.reset(collection=task["collection"], task_id=task["task_id"])

            async def rpc(method, params, i):
                resp = await env._send_and_receive({"type": "mcp", "data": {"jsonrpc": "2.0", "method": method, "params": params, "id": i}})
                mt.WSMCPResponse.model_validate(resp)
                rpc = mt.JsonRpcResponse.model_validate(resp["data"])
                if rpc.error is not None:
                    raise RuntimeError(f"{method}: {rpc.error}")
                return rpc.result

            listed = await rpc("tools/list", {}, 1)
            for t in listed["tools"]:
                mt.Tool.model_validate(t)
            for i, g in enumerate(task["gold"], 2):
                res = await rpc("tools/call", {"name": g["name"], "arguments": dict(g["arguments"], label=g["label"])}, i)
                missing = {"content", "data", "is_error"} - set(res)
                if missing or res["is_error"]:
                    self.problem(mode, task, f"tools/call {g['name']}: not a call result ({sorted(missing)} missing): {res!r:.300}")
            res = await rpc("tools/call", {"name": "submit_answer", "arguments": {"labels": task["answer_labels"]}}, 99)
            ok = res.get("data", {}).get("reward") == 1
            self.count(mode, ok)
            if not ok:
                self.problem(mode, task, f"submit_answer: {res!r:.300}")

    # HTTP POST /reset and /step, every answer under OpenEnv's models; a
    # resent request_id gets the first answer.
    def http(self, task):
        import requests
        mode = "http"
        t = self.m["types"]
        body = {"collection": task["collection"], "task_id": task["task_id"], "seed": 0}
        t.ResetRequest.model_validate(body)
        r = requests.post(self.base + "/reset", json=body, timeout=30)
        reset = t.ResetResponse.model_validate(r.json())
        eid = reset.observation["episode_id"]
        last = None
        for i, g in enumerate(task["gold"]):
            req = {"action": {"type": "call_tool", "tool_name": g["name"], "arguments": g["arguments"], "label": g["label"]},
                   "episode_id": eid, "request_id": f"{eid}-{i}", "timeout_s": 30}
            t.StepRequest.model_validate(req)
            last = t.StepResponse.model_validate(requests.post(self.base + "/step", json=req, timeout=30).json())
        req = {"action": {"type": "final_answer", "labels": task["answer_labels"]}, "episode_id": eid, "request_id": f"{eid}-final"}
        first = requests.post(self.base + "/step", json=req, timeout=30).json()
        final = t.StepResponse.model_validate(first)
        again = requests.post(self.base + "/step", json=req, timeout=30).json()
        if again != first:
            self.problem(mode, task, f"the final step resent with its request_id answered otherwise: {again!r:.300}")
        self.count(mode, final.reward == 1 and final.done)
        if final.reward != 1:
            self.problem(mode, task, f"final reward {final.reward}")

    async def play_all(self):
        for task in self.plan:
            for name, f in (("generic_openai", lambda: self.generic(task, "openai")), ("generic_mcp", lambda: self.generic(task, "mcp")),
                            ("mcptool_openai", lambda: self.mcptool(task, "openai")), ("mcptool_mcp", lambda: self.mcptool(task, "mcp")),
                            ("ws_mcp", lambda: self.ws_mcp(task))):
                try:
                    await f()
                except Exception as e:
                    self.count(name, False)
                    self.problem(name, task, "".join(traceback.format_exception_only(type(e), e)).strip())
            try:
                self.http(task)
            except Exception as e:
                self.count("http", False)
                self.problem("http", task, "".join(traceback.format_exception_only(type(e), e)).strip())


def main():
    src, ws_dir, base, plan_path = sys.argv[1:5]
    mods = load_openenv(src, ws_dir)
    with open(plan_path) as f:
        plan = json.load(f)
    run = Run(mods, base, plan)
    asyncio.run(run.play_all())
    report = mods["_validation"].validate_running_environment(base, timeout_s=10)
    run.out["validator"] = {"passed": report["passed"], "summary": report["summary"],
                            "failed": [c for c in report["criteria"] if not c["passed"]]}
    run.out["problems"] = run.problems
    print(json.dumps(run.out))


if __name__ == "__main__":
    main()
