"""An MCP client on the official Python SDK (`mcp` from PyPI), driven line by line.

Run by the seed conformance tests (tests/seed_*.rs, through tests/common/mcp_py.rs):
`python seed_client.py URL` with the API key in SAYSO_KEY. Each line on stdin is one request,
answered by one JSON line on stdout, in order:
  {"list": true}                      -> {"tools": [{"name", "inputSchema"}, ...]}
  {"tool": NAME, "args": {...}}       -> {"is_error", "text", "structured"}
The test answers questions through the page while a call waits. End of stdin ends the script;
any failure raises, so the exit code is non-zero with the reason on stderr.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession

from mcp_client import connect, field


def result_line(result):
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return {
        "is_error": bool(field(result, "is_error", "isError")),
        "text": "\n".join(texts),
        "structured": field(result, "structured_content", "structuredContent"),
    }


async def main(url, key):
    loop = asyncio.get_running_loop()
    async with connect(url, key) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line:
                    return
                request = json.loads(line)
                if request.get("list"):
                    tools = await session.list_tools()
                    out = {
                        "tools": [
                            {"name": t.name, "inputSchema": field(t, "input_schema", "inputSchema")}
                            for t in tools.tools
                        ]
                    }
                else:
                    out = result_line(await session.call_tool(request["tool"], request["args"]))
                print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], os.environ["SAYSO_KEY"]))
