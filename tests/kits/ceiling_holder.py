"""A unit's attempt in a process of its own, holding one call's reservation on its run's
ceiling: for the tests of units waiting their turn across processes.

    python -m tests.kits.ceiling_holder REDIS_URL RUN UNIT TOKENS CEILING HEARTBEAT

It beats as a unit's worker does, reserves TOKENS as its job would, prints `held`, then
settles with the number its standard input gives and exits. Killed, it settles nothing: its
reservation is left to lapse with its heartbeat.
"""

import asyncio
import sys

from app.store.ceiling_line import RunPools
from app.store.live import LiveRuns
from app.store.records import State, UnitStatus
from app.store.unit_writes import UnitWrites
from policies.budget import TokenCeiling


async def hold(url: str, run: str, n: int, tokens: int, ceiling: int, heartbeat: float) -> None:
    async with LiveRuns.at(url, heartbeat) as live:
        writes = UnitWrites(live, run, n, 1)
        async with writes.running(UnitStatus(number=n, state=State.ACTIVE)):
            pools = RunPools(writes, live.ceiling(run, ceiling), place=writes.place())
            settle = await TokenCeiling(ceiling, pools).take(tokens)
            print("held", flush=True)
            used = await asyncio.to_thread(sys.stdin.readline)
            await settle(int(used))
            await writes.write()


if __name__ == "__main__":
    url, run, n, tokens, ceiling, heartbeat = sys.argv[1:]
    asyncio.run(hold(url, run, int(n), int(tokens), int(ceiling), float(heartbeat)))
