"""A pytest-xdist load scheduler that keeps each worker's queue deep enough to call ahead.

xdist's own load scheduler refills a worker only when its queue runs low, and sends
nothing while the worker holds two items whose last one took over 0.1 s. A case item
takes about as long as its model call, so after the first chunk a worker would see its
items a couple at a time, and could not keep --toolselect-concurrency calls in flight.
This one tops every worker's queue up to `depth` items whenever it reports one done.
Imported only under xdist (the controller asks for a scheduler), never at plugin load.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScheduling


class DeepLoadScheduling(LoadScheduling):
    def __init__(self, config: Any, log: Any, depth: int) -> None:
        super().__init__(config, log)
        self.depth = max(2, depth)

    def schedule(self) -> None:
        super().schedule()
        for node in self.nodes:
            self.check_schedule(node)

    def check_schedule(self, node: Any, duration: float = 0) -> None:
        if node.shutting_down:
            return
        if not self.pending:
            node.shutdown()
            return
        queued = len(self.node2pending[node])
        if queued < self.depth:
            # an even share of what is left at most, so the last items still spread out
            share = max(1, len(self.pending) // max(1, len(self.node2pending)))
            self._send_tests(node, min(self.depth - queued, share))
