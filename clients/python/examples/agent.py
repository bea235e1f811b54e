#!/usr/bin/env python3
"""An agent that remembers: the loop of examples/agent, in Python.

For each thing the user says: read what memory holds for it, put that in the model's
prompt, answer, then write the turn to memory. Any OpenAI-compatible chat server
answers (Ollama, vLLM, llama.cpp server, LM Studio, OpenAI).

    CREDO_KEY=credo_... python3 examples/agent.py --scope user:ana "I moved to Miami last month."
    CREDO_KEY=credo_... python3 examples/agent.py --scope user:ana      # one turn per line of input

Environment: CREDO_URL (default http://127.0.0.1:9464) and CREDO_KEY (a key with the
read and write rights); OPENAI_BASE_URL (default http://127.0.0.1:11434/v1, Ollama's
OpenAI-compatible API), OPENAI_API_KEY and CHAT_MODEL (default qwen2.5:7b).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import urllib.request
from typing import Dict, Iterable, List

# Run from a checkout without installing the package.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import credo  # noqa: E402


def chat(messages: List[Dict[str, str]]) -> str:
    """One answer of an OpenAI-compatible chat server."""
    base = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1").rstrip("/")
    headers = {"Content-Type": "application/json"}
    if os.environ.get("OPENAI_API_KEY"):
        headers["Authorization"] = "Bearer " + os.environ["OPENAI_API_KEY"]
    body = {"model": os.environ.get("CHAT_MODEL", "qwen2.5:7b"), "messages": messages}
    req = urllib.request.Request(base + "/chat/completions", data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(req, timeout=300) as res:
        return json.load(res)["choices"][0]["message"]["content"]


def run(memory: credo.Client, scope: str, said: Iterable[str]) -> None:
    conversation: List[Dict[str, str]] = []
    for line in said:
        user = line.strip()
        if not user:
            continue
        # 1. Before answering: what memory holds for what the user just said.
        known = memory.context(scope, user)
        system = "You are a helpful assistant. What you know about the user:\n" + known.context
        # 2. The model answers with it.
        reply = chat([{"role": "system", "content": system}] + conversation + [{"role": "user", "content": user}])
        print(f"user: {user}\nassistant: {reply}", flush=True)
        conversation += [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
        # 3. After the turn: remember it. Extraction runs in the background; waiting here
        # only makes the next turn of this demo see it (a real agent moves on).
        turn = memory.add_transcript(scope, conversation[-2:])
        [episode] = memory.wait(turn, timeout=300)
        if episode.state != "applied":
            raise SystemExit(f"episode {episode.id} failed: {episode.last_error}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scope", default="user:ana", help="whose memory (default user:ana)")
    p.add_argument("said", nargs="*", help="what the user says, one turn each (default: lines of standard input)")
    args = p.parse_args()
    try:
        run(credo.Client(), args.scope, args.said or sys.stdin)
    except credo.APIError as e:
        raise SystemExit(f"agent: {e}")


if __name__ == "__main__":
    main()
