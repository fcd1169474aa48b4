"""The `approve` permission-prompt tool through the official Python MCP SDK, as headless
Claude Code calls it (`claude -p --permission-prompt-tool mcp__sayso__approve`).

Run by tests/hooks/approve.rs: `python approve_client.py URL` with the API key in SAYSO_KEY.
Makes three calls and prints, for each, one JSON line on stdout with the tool's text: the
Rust test answers the first two on the page (Allow, then Deny with a remark); the third
waits one second and gets no answer.
"""

import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from mcp_client import connect, field  # noqa: E402

from mcp import ClientSession  # noqa: E402


def text_of(result):
    if field(result, "is_error", "isError"):
        raise SystemExit(f"tool error: {result.content}")
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    if len(texts) != 1:
        raise SystemExit(f"expected one text, got {result.content}")
    return texts[0]


async def main(url, key):
    async with connect(url, key) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            calls = [
                {"tool_name": "Bash", "input": {"command": "rm -rf build/", "description": "clean"},
                 "tool_use_id": "toolu_01A"},
                {"tool_name": "Write", "input": {"file_path": "/srv/app/.env", "content": "K=1\n"},
                 "tool_use_id": "toolu_01B"},
                {"tool_name": "Bash", "input": {"command": "make deploy"},
                 "tool_use_id": "toolu_01C", "wait_s": 1},
            ]
            for args in calls:
                result = await session.call_tool("approve", args)
                print(json.dumps({"call": args["tool_use_id"], "text": text_of(result)}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], os.environ["SAYSO_KEY"]))
