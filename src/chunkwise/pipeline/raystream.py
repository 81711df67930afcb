"""The driver side of ``--executor ray``: batches of files through chained actor calls, results in
input order, a bounded number of batches in flight, and lost workers survived.

A batch goes *prepare* -> (*embed*) -> (*write*) as chained actor calls: each stage's result stays
in Ray's object store and is handed to the next stage's actor by reference, so only what the
driver needs comes back to it (prepared documents and vectors when it writes; a small ``Written``
summary per document when the cluster writes). Each stage sends a batch to its least busy actor
(fewest unfinished calls). At most ``inflight`` batches are out at once: the driver holds those,
never the corpus, and a slow consumer (the single SQLite writer) holds the actors back.

Faults. Actors restart when their process dies (``max_restarts=-1``) and Ray runs the call that
was in flight again once (``max_task_retries=1``); preparing is pure and writing is idempotent (a
document written before the loss is found unchanged), so a retry changes nothing. A batch lost a
second time is split into single files, each retried the same way, so one file that keeps killing
its worker cannot take others with it; a file lost again is that file's ``PrepareFailure`` ("ingest
it again"): it is not written, so the next run prepares it. The single files are sent one at a time,
each when the one before it is settled: sent together, an innocent file queued on the actor behind
the killer died with it twice and was reported lost too. An error the stages raise themselves (a
model that cannot load, a full disk) fails the run with its message.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator

from chunkwise.errors import ChunkwiseError

ACTOR_OPTIONS = {"max_restarts": -1, "max_task_retries": 1}
LOST = ("its Ray worker was lost while preparing it, again on a retry ({cause}); it was not written: "
        "ingest it again")


@dataclass
class _Batch:
    items: list  # the files' tasks and, in place, what the walk passed through (failures)
    tasks: list  # the PrepareTasks among them, sent to the actors
    refs: tuple = ()  # (prepared, vectors or None, written or None)


class Stages:
    """The actor pools of one run: ``prepare`` actors (required), then optionally ``embed`` and
    ``write`` actors (Ray actor handles)."""

    def __init__(self, ray, prepare: list, embed: list = (), write: list = ()) -> None:
        self.ray = ray
        self.pools = {"prepare": list(prepare), "embed": list(embed), "write": list(write)}
        self.calls: dict[tuple[str, int], list] = {}  # unfinished (so far as known) calls per actor

    def _pick(self, stage: str) -> int:
        """The actor of ``stage`` with the fewest unfinished calls (the first on a tie)."""
        pool = self.pools[stage]
        counts = []
        for i in range(len(pool)):
            pending = self.calls.get((stage, i), [])
            if pending:
                _, pending = self.ray.wait(pending, num_returns=len(pending), timeout=0)
                self.calls[(stage, i)] = pending
            counts.append(len(pending))
        return min(range(len(pool)), key=counts.__getitem__)

    def _call(self, stage: str, *args):
        i = self._pick(stage)
        ref = self.pools[stage][i].run.remote(*args)
        self.calls.setdefault((stage, i), []).append(ref)
        return ref

    def submit(self, batch: _Batch) -> _Batch:
        prepared = self._call("prepare", batch.tasks)
        vectors = self._call("embed", prepared) if self.pools["embed"] else None
        written = self._call("write", prepared, vectors) if self.pools["write"] else None
        batch.refs = (prepared, vectors, written)
        return batch

    def stop(self) -> None:
        for pool in self.pools.values():
            for actor in pool:
                self.ray.kill(actor)
        self.pools = {k: [] for k in self.pools}


def ordered(ray, stages: Stages, items: Iterable, batch_size: int, inflight: int) -> Iterator[tuple[object, dict]]:
    """(prepared item or ``Written``, vectors: {} when the cluster wrote or embedded nothing) per
    item of ``items``, in input order; non-task items (the walk's failures) pass through in place."""
    from chunkwise.pipeline.prepare import PrepareTask

    items = iter(items)
    queue: deque[_Batch] = deque()
    done = False

    def fill() -> None:
        nonlocal done
        while not done and len(queue) < inflight:
            group: list = []
            tasks: list = []
            for item in items:
                group.append(item)
                if isinstance(item, PrepareTask):
                    tasks.append(item)
                    if len(tasks) >= batch_size:
                        break
            else:
                done = True
            if group:
                batch = _Batch(group, tasks)
                queue.append(stages.submit(batch) if tasks else batch)

    fill()
    while queue:
        batch = queue.popleft()
        if batch.tasks:
            if not batch.refs:  # a file retried on its own: sent only now, when the one before it is settled
                batch = stages.submit(batch)
            got = _settle(ray, stages, batch)
            if got is None:  # lost twice with several files: each file again on its own, in place
                queue.extendleft(reversed([_Batch([t], [t]) for t in batch.tasks]))
                continue
            results = iter(got)
        else:
            results = iter(())
        fill()  # the next batches go out before this one is handed on (the consumer writes it)
        for item in batch.items:
            yield next(results) if isinstance(item, PrepareTask) else (item, {})


def _settle(ray, stages: Stages, batch: _Batch) -> list | None:
    """(item, vectors) per task of a finished batch; None: split it and retry its files one by one;
    a file lost on its own retry becomes its ``PrepareFailure``."""
    from chunkwise.pipeline.prepare import PrepareFailure

    prepared, vectors, written = batch.refs
    try:
        if written is not None:
            return [(w, {}) for w in ray.get(written)]
        docs = ray.get(prepared)
        vecs = ray.get(vectors) if vectors is not None else [{}] * len(docs)
        return list(zip(docs, vecs))
    except ray.exceptions.RayTaskError as exc:  # the stage's own error: the run's
        raise _failed(ray, exc) from None
    except ray.exceptions.RayActorError as exc:
        if exc.actor_init_failed:
            raise _failed(ray, exc) from None
        lost = exc
    except ray.exceptions.RayError as exc:  # a worker, an object or a node lost
        lost = exc
    if len(batch.tasks) > 1:
        return None
    return [(PrepareFailure(batch.tasks[0], LOST.format(cause=_cause(ray, lost))), {})]


def _failed(ray, exc: BaseException) -> ChunkwiseError:
    inner = _inner(ray, exc)
    if isinstance(inner, ChunkwiseError):  # the run's own error (a bad model file, a full disk)
        return inner
    return ChunkwiseError(f"the Ray pipeline failed: {_cause(ray, exc)}")


def _inner(ray, exc: BaseException) -> BaseException:
    """The worker's own exception inside Ray's wrappers."""
    seen, todo, last = set(), [exc], exc
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ChunkwiseError) and not isinstance(e, ray.exceptions.RayError):
            return e
        last = e
        todo += [getattr(e, "cause", None), e.__cause__, e.__context__]
    return last


def _cause(ray, exc: BaseException) -> str:
    """The innermost error's one line (Ray wraps a worker's exception in its own)."""
    inner = _inner(ray, exc)
    text = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {text[-1] if text else ''}".rstrip(": ")
