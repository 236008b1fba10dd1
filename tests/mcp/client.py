"""Drives `wbx mcp` with the official MCP Python SDK (a client that is not
ours): over stdio it lists the tools and calls `jq`, a shell pipeline, a
failing command, a denied one, a registered plugin and a slow line that
reports progress; over streamable HTTP it does the same
with and without the bearer token, and gives up on an endless call. Prints one JSON object of what it saw;
the Rust test asserts on it.

usage: client.py WBX HOME
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

WBX, HOME = sys.argv[1], sys.argv[2]


def text_of(result):
    return {
        "text": "".join(c.text for c in result.content if getattr(c, "type", "") == "text"),
        "is_error": bool(result.is_error),
    }


async def exercise(session, seen, progress):
    await session.initialize()
    tools = (await session.list_tools()).tools
    seen["tools"] = {t.name: {"description": t.description, "schema": t.input_schema} for t in tools}
    seen["jq"] = text_of(
        await session.call_tool("jq", {"args": ["-c", ".users[].name"], "stdin": '{"users":[{"name":"ada"},{"name":"bob"}]}'})
    )
    seen["shell"] = text_of(await session.call_tool("shell", {"line": "seq 1 5 | sort -rn | head -n 2"}))
    seen["false"] = text_of(await session.call_tool("false", {}))
    seen["plugin"] = [text_of(await session.call_tool("counter", {"input": "apple"})) for _ in range(2)]
    seen["denied"] = text_of(await session.call_tool("fetch", {"args": ["http://example.com/"]}))
    seen["slow"] = text_of(
        await session.call_tool(
            "shell",
            {"line": "seq 1 20000000 | wc -l"},
            progress_callback=progress,
        )
    )
    try:
        await session.call_tool("no-such-tool", {})
        seen["unknown"] = "answered"
    except Exception as e:  # the SDK raises the protocol error
        seen["unknown"] = type(e).__name__ + ": " + str(e)


async def over_stdio():
    seen, notes = {}, []

    async def progress(value, total, message):
        notes.append(message)

    params = StdioServerParameters(
        command=WBX, args=["--home", HOME, "mcp", "--profile", "minimal"], env={"PATH": os.environ["PATH"]}
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, seen, progress)
    seen["progress"] = notes
    return seen


def cpu_seconds(pid):
    """User and system CPU time of process `pid`, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def over_http():
    port = free_port()
    token = "s3cret-token"
    server = subprocess.Popen(
        [WBX, "--home", HOME, "mcp", "--listen", f"127.0.0.1:{port}", "--token", token],
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        seen = {}
        # No token: refused before the protocol.
        req = urllib.request.Request(url, data=b"{}", headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=5)
            seen["no_token_status"] = 200
        except urllib.error.HTTPError as e:
            seen["no_token_status"] = e.code
        # Any path but the endpoint is 404, token or not.
        other = urllib.request.Request(
            f"http://127.0.0.1:{port}/other", headers={"Authorization": f"Bearer {token}"}
        )
        try:
            urllib.request.urlopen(other, timeout=5)
            seen["other_path_status"] = 200
        except urllib.error.HTTPError as e:
            seen["other_path_status"] = e.code
        # The right token, but a rebound page's name as Host: refused.
        rebound = urllib.request.Request(
            url,
            data=b"{}",
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Host": "evil.example",
            },
        )
        try:
            urllib.request.urlopen(rebound, timeout=5)
            seen["foreign_host_status"] = 200
        except urllib.error.HTTPError as e:
            seen["foreign_host_status"] = e.code
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with client:
            async with streamable_http_client(url, http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    seen["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
                    seen["shell"] = text_of(await session.call_tool("shell", {"line": "echo over http | upper"}))
                    # A call the client gives up on: the guest must stop,
                    # so the server's CPU goes quiet at once.
                    endless = session.call_tool("shell", {"line": "seq 1 999999999999 | wc -l"})
                    try:
                        await asyncio.wait_for(endless, timeout=2)
                        seen["cancelled"] = "finished"
                    except (asyncio.TimeoutError, TimeoutError):
                        seen["cancelled"] = "timed out"
                    await asyncio.sleep(0.5)
                    before = cpu_seconds(server.pid)
                    await asyncio.sleep(2)
                    seen["cpu_after_cancel"] = cpu_seconds(server.pid) - before
                    seen["after_cancel"] = text_of(await session.call_tool("echo", {"args": ["still", "serving"]}))
        return seen
    finally:
        server.terminate()
        server.wait(timeout=10)


def main():
    out = {"stdio": asyncio.run(over_stdio()), "http": asyncio.run(over_http())}
    # Off loopback without a token the server refuses to start.
    refused = subprocess.run(
        [WBX, "--home", HOME, "mcp", "--listen", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "WB_MCP_TOKEN"},
    )
    out["open_listen"] = {"code": refused.returncode, "stderr": refused.stderr}
    print(json.dumps(out))


main()
