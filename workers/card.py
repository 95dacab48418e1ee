"""A worker process's card in Redis: which device it serves, what it proves now, which keys it
holds resident. Readers (``proofq grpc``'s GetStatus) import this module alone.

``proofq:card:<worker name>`` (hash; the prefix is ``RedisKeys.card_prefix``): host, gpu (the
UUID its locks use), ordinal (the GPU number it was started with; -1 on the CPU),
device_name, total_bytes, job, partition, proof_type (empty between partitions), keys (JSON:
``<proof type>/<key name>`` → resident bytes, for each key resident now; ``workers.key_residency``).
The card lives as long as its lease: the worker's heartbeat renews it, so a dead worker's card
expires by itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import redis

@dataclass(frozen=True)
class Card:
    worker: str
    host: str
    gpu: str
    ordinal: int
    device_name: str
    total_bytes: int
    job: str = ""
    partition: int = -1
    proof_type: str = ""
    keys: dict[str, int] = field(default_factory=dict)


def read_cards(client: redis.Redis, prefix: str) -> list[Card]:
    """Every live worker's card under ``prefix``, by worker name."""
    names = sorted(client.scan_iter(match=prefix + "*", count=1000))
    with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hgetall(name)
        rows = pipe.execute()
    cards = []
    for name, raw in zip(names, rows):
        if not raw:
            continue
        f = {k.decode(): v.decode() for k, v in raw.items()}
        cards.append(Card(name.decode().removeprefix(prefix), f.get("host", ""),
                          f.get("gpu", ""), int(f.get("ordinal", -1)),
                          f.get("device_name", ""), int(f.get("total_bytes", 0)),
                          f.get("job", ""), int(f.get("partition", -1)),
                          f.get("proof_type", ""), json.loads(f.get("keys") or "{}")))
    return cards


class WorkerCard:
    """The card of this process; ``renew`` (the heartbeat's) writes it whole again and
    extends its lease, so a card lost with Redis comes back with it."""

    def __init__(self, client: redis.Redis, card: Card, lease_s: float, prefix: str) -> None:
        self.client = client
        self.key = prefix + card.worker
        self.lease_ms = max(1, int(lease_s * 1000))
        self._fields = {"host": card.host, "gpu": card.gpu, "ordinal": card.ordinal,
                        "device_name": card.device_name, "total_bytes": card.total_bytes,
                        "job": "", "partition": -1, "proof_type": "", "keys": "{}"}

    def update(self, **fields) -> None:
        """Change fields (``keys`` as a dict) and write the card."""
        if "keys" in fields:
            fields["keys"] = json.dumps(fields["keys"], sort_keys=True)
        self._fields.update(fields)
        self.renew()

    def renew(self) -> None:
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hset(self.key, mapping=self._fields)
            pipe.pexpire(self.key, self.lease_ms)
            pipe.execute()

    def remove(self) -> None:
        self.client.delete(self.key)
