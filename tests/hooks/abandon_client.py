"""An MCP client that gives up mid-`approve`, through the official Python MCP SDK.

Run by tests/hooks/approve.rs: `python abandon_client.py URL` with the API key in SAYSO_KEY.
Calls `approve` with a 10-minute wait and prints one JSON line once the call is on its way;
the Rust test then kills this process, which closes its connection mid-call.
"""

import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from mcp_client import connect  # noqa: E402

from mcp import ClientSession  # noqa: E402


async def main(url, key):
    async with connect(url, key) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            call = asyncio.create_task(session.call_tool("approve", {
                "tool_name": "Bash", "input": {"command": "make deploy"},
                "tool_use_id": "toolu_gone", "wait_s": 600,
            }))
            print(json.dumps({"step": "calling"}), flush=True)
            await call
            raise SystemExit("the call came back, though nobody answered")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], os.environ["SAYSO_KEY"]))
