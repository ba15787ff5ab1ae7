#!/usr/bin/env python3
"""A training loop's rollout worker against toolenv's RL episodes.

It speaks toolenv's HTTP episode API (OpenEnv's POST /reset and /step, the
step naming the episode the reset returned) with the standard library only,
and asks any OpenAI-compatible model for each step: the model's tool calls
are the step's action, its reply without tool calls the final answer. Each
episode's trajectory is appended to --out in OpenAI chat format, with its
reward, ready for fine-tuning; the returns are printed.

    python3 examples/episodes/rollout.py --env http://127.0.0.1:8080/openenv \
        --model http://127.0.0.1:8000/v1 --model-name Qwen/Qwen2.5-7B-Instruct \
        --collection bird-slot --episodes 8 --out rollouts.jsonl

A trainer runs many of these at once (one episode each at a time); the
server caps open episodes at --max-episodes (and each client's share of
them at --max-episodes-per-client) and answers 503 beyond it. Each
episode is closed once its trajectory is read, so that its slot is free
at once; the worker prints its throughput at the end.
"""
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request


def request(url, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.read().decode()
    except urllib.error.HTTPError as e:
        detail = e.read().decode()
        sys.exit(f"{url}: HTTP {e.code}: {detail}")


def post(url, body, token=None):
    return json.loads(request(url, body, token))


def rollout(args, seed):
    reset = {"seed": seed}
    if args.collection:
        reset["collection"] = args.collection
    if args.split:
        reset["split"] = args.split
    first = post(args.env + "/reset", reset, args.token)
    obs = first["observation"]
    eid = obs["episode_id"]
    messages = [{"role": "system", "content": obs["instructions"]},
                {"role": "user", "content": obs["query"]}]
    ret, done, steps = 0.0, False, 0
    while not done:
        reply = post(args.model + "/chat/completions",
                     {"model": args.model_name, "messages": messages, "tools": obs["openai_tools"],
                      "temperature": 0, "seed": seed}, args.model_token)
        msg = reply["choices"][0]["message"]
        messages.append({k: v for k, v in msg.items() if k in ("role", "content", "tool_calls")})
        calls = msg.get("tool_calls") or []
        if calls:
            action = {"type": "tool_calls", "tool_calls": calls}
        else:
            action = {"type": "final_answer", "text": msg.get("content") or ""}
        step = post(args.env + "/step", {"episode_id": eid, "action": action}, args.token)
        for call, res in zip(calls, step["observation"].get("results") or []):
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                             "content": res["result"]["content"][0]["text"]})
        ret += step["reward"] or 0.0
        done = step["done"]
        steps += 1
    return eid, ret, steps


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="http://127.0.0.1:8080/openenv", help="toolenv's episode URL")
    p.add_argument("--model", default="http://127.0.0.1:8000/v1", help="OpenAI-compatible endpoint")
    p.add_argument("--model-name", default="model")
    p.add_argument("--collection", default="")
    p.add_argument("--split", default="")
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--seed", type=int, default=0, help="the first episode's seed; each next one adds 1")
    p.add_argument("--out", default="", help="append each trajectory here (OpenAI chat JSONL)")
    args = p.parse_args()
    args.token = os.environ.get("TOOLENV_TOKEN", "")
    args.model_token = os.environ.get("OPENAI_API_KEY", "")
    returns, steps = [], 0
    start = time.monotonic()
    for i in range(args.episodes):
        eid, ret, n = rollout(args, args.seed + i)
        returns.append(ret)
        steps += n
        if args.out:
            line = request(f"{args.env}/trajectory?episode_id={eid}&format=openai", None, args.token)
            with open(args.out, "a") as f:
                f.write(line)
        # Done episodes free their slot by themselves; closing says the
        # worker is finished with it (and frees it at once if it was not).
        post(args.env + "/close", {"episode_id": eid}, args.token)
        print(f"episode {i + 1}/{args.episodes} {eid}: return {ret:g}")
    elapsed = max(time.monotonic() - start, 1e-9)
    print(f"mean return {sum(returns) / len(returns):g} over {len(returns)} episodes")
    print(f"throughput: {len(returns) / elapsed:.2f} episodes/s, {steps / elapsed:.2f} steps/s ({steps} steps in {elapsed:.1f} s)")


if __name__ == "__main__":
    main()
