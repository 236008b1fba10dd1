import sys
from wit_world import exports

class Run(exports.Run):
    def run(self) -> None:
        data = sys.stdin.read()
        print("hello from python:", data.strip().upper())
