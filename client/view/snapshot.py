"""What the job view shows, as JSON: the newest jobs with their partitions' phases, each
device's compute time, and the workers quarantined for a kind of work, from the job store,
``proofq:events`` and ``proofq:quarantine``."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from client.view.sectors import sector_of
from tasks.jobs import JobStore
from workers.phase_events import Phase, PhaseEvent, current_phases, recent_events
from workers.quarantine import quarantined

#: Lock waits: the phases a partition spends queued for a GPU lock.
LOCK_WAITS = (Phase.MEM_WAIT, Phase.COMPUTE_WAIT)


def snapshot(store: JobStore, *, jobs: int = 30, events: int = 20000) -> dict[str, Any]:
    """The view's data: ``jobs`` newest jobs, the newest ``events`` phase events."""
    seconds, micros = store.redis.time()
    now = seconds + micros / 1e6
    log = recent_events(store.redis, events, store.keys.events)
    by_job: dict[str, list[PhaseEvent]] = defaultdict(list)
    for event in log:
        by_job[event.job].append(event)
    shown = [_job(state.to_json(), by_job.get(state.job_id, []), now) | sector_of(store, state)
             for state in store.recent(jobs)]
    start = min([e.start for e in log] + [j["created"] for j in shown] + [now])
    running = [phase for job in shown for unit in job["units"] for phase in unit["phases"]
               if phase.get("running")]
    return {"now": now, "window": [start, now], "jobs": shown,
            "devices": _devices(log, running, start, now), "lock_waits": _lock_waits(log),
            "events": len(log),
            "quarantined": [q.to_json() for q in quarantined(store.redis, store.keys)]}


def _job(state: dict[str, Any], events: list[PhaseEvent], now: float) -> dict[str, Any]:
    """The job and its partitions' phases; a partition's current phase runs up to now, in a
    cancelled job too when it began before the cancel (a worker stops at the next phase, so
    the device is still busy with it)."""
    partitions: dict[int, list[dict]] = defaultdict(list)
    for event in events:
        partitions[event.partition].append(_phase(event))
    running = (current_phases(events, state["job"])
               if state["status"] in ("proving", "cancelled") else {})
    for partition, phase in running.items():
        last = partitions[partition][-1]
        begun = state["status"] == "proving" or last["end"] < (state["finished"] or now)
        if begun and not phase.endswith("failed"):  # from the last end until now
            partitions[partition].append({"phase": phase, "start": last["end"], "end": now,
                                          "running": True, "device": last["device"],
                                          "worker": last["worker"], "error": "",
                                          "job": state["job"], "partition": partition})
    units = [{"partition": p, "phases": partitions[p]} for p in sorted(partitions)]
    still = sum(bool(phases and phases[-1].get("running")) for phases in partitions.values())
    return {**state, "units": units, "still_running": still}


def _phase(event: PhaseEvent) -> dict[str, Any]:
    return {"phase": event.phase, "start": event.start, "end": event.end,
            "device": _device(event), "worker": event.worker, "error": event.error,
            "fence": event.fence}


def _device(event: PhaseEvent) -> str:
    return f"{event.host}/{event.gpu}" if event.host else event.gpu


def _devices(log: list[PhaseEvent], running: list[dict[str, Any]], start: float,
             now: float) -> list[dict[str, Any]]:
    """Each device's compute intervals (job, partition) and its busy share of the window;
    a compute phase still running counts up to now (its event comes when it ends)."""
    busy: dict[str, list[list]] = defaultdict(list)
    for event in log:
        if event.phase == "compute":
            busy[_device(event)].append([event.start, event.end, event.job, event.partition])
        else:
            busy.setdefault(_device(event), [])
    for phase in running:
        if phase["phase"] == "compute":
            busy[phase["device"]].append([phase["start"], now, phase["job"], phase["partition"]])
    span = max(now - start, 1e-9)
    return [{"device": name, "busy": spans,
             "busy_share": sum(end - begin for begin, end, *_ in spans) / span}
            for name, spans in sorted(busy.items())]


def _lock_waits(log: list[PhaseEvent]) -> list[dict[str, Any]]:
    """Per device and lock: how many waits, their mean and longest (seconds)."""
    waits: dict[tuple[str, str], list[float]] = defaultdict(list)
    for event in log:
        if event.phase in LOCK_WAITS:
            waits[(_device(event), event.phase)].append(event.seconds)
    return [{"device": device, "lock": phase.removesuffix("_wait"), "count": len(seconds),
             "mean_s": sum(seconds) / len(seconds), "max_s": max(seconds)}
            for (device, phase), seconds in sorted(waits.items())]
