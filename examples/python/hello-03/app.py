import sys
from wit_world import exports


class Run(exports.Run):
    async def run(self) -> None:
        data = sys.stdin.read()
        print("hello from python at WASI 0.3:", data.strip().upper())
