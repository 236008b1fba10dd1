"""A `plugin` world component: counts how often each input was seen, in kv."""

from wit_world import WitWorld
from wit_world.imports import kv


class WitWorld(WitWorld):
    def run(self, input: str) -> str:
        key = "seen:" + input
        current = kv.get(key)
        count = int(current.decode()) + 1 if current is not None else 1
        kv.set(key, str(count).encode())
        return f"{input} seen {count} time(s)"
