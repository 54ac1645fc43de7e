"""The one store interface: what the engine, the hosts and the CLI ask of persistence.

Two implementations keep it — :class:`~core.store.sqlite.SqliteStore` (one machine's file, the
default) and :class:`~core.store.postgres.PostgresStore` (one database shared by every host of a
user) — and one contract suite (``tests/store/``) runs against both, so every operation has the
same semantics on either (the APScheduler 4 data-store pattern). The interface is synchronous:
a store lives on its own thread (:mod:`core.store.thread`) and the event loop queues calls to it.

The guarantees every implementation gives:

* :meth:`Store.transact` reads a goal, lets a pure function decide its new row and history, and
  writes both atomically, serialised against every other transaction on any connection — the
  resume claim's "exactly one winner", across threads, processes and hosts;
* with :attr:`Store.epoch` set, every write first checks that this host's fencing epoch is still
  the current one (:class:`LeaseLost` otherwise); with :attr:`Store.host_id` set, a goal another
  host owns cannot be changed here (:class:`NotOwner`) and a new goal belongs to this host;
* the freshest reading of a window wins, and a reading that is not exact never hides a fresh exact
  one another host observed (:meth:`Store.save_reading`);
* an action request is carried out at most once: the owner *takes* it, or the asker *expires*
  it, never both (:meth:`Store.take_requests`, :meth:`Store.expire_request`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from core.i18n import N_
from core.models import GoalState, PauseReason

if TYPE_CHECKING:
    from core.models import Goal, HistoryRow, QuotaReading

T = TypeVar("T")

#: ``meta`` keys recording the goal files the user approved (``pipeline-approved:<host>:<name>``,
#: :mod:`core.providers.pipeline.approval`): ``store migrate`` carries them along
APPROVALS_META_PREFIX = "pipeline-approved:"


class StoreError(Exception):
    """The store cannot be used; the message says why and what to do."""


class NoData(StoreError):
    """A read-only open found no database (or an empty one): nothing has been stored yet."""


class LeaseLost(StoreError):
    """This host's epoch is no longer the current one: another host replaced it."""


class NotOwner(StoreError):
    """The goal belongs to another host: only its owner changes it."""

    def __init__(self, goal_id: str, owner: str) -> None:
        super().__init__(N_("goal {goal} belongs to host {host}; only that host changes "
                            "it").format(goal=goal_id, host=owner))
        self.goal_id = goal_id
        self.owner = owner


class StoreUnavailable(StoreError):
    """The store cannot be reached just now (the shared database is down, the network is
    gone): not "never" — what could not be written waits and is written when it is back."""


@dataclass
class Mutation(Generic[T]):
    """What a transaction function decided: the goal's new row, history rows, a result."""

    goal: Goal | None
    result: T
    history: list[HistoryRow] = field(default_factory=list)


@dataclass(frozen=True)
class Committed(Generic[T]):
    before: Goal | None
    after: Goal | None
    result: T
    history: list[HistoryRow]


@dataclass(frozen=True)
class HostRecord:
    """A host as registered in the store: who it is, where, and when it last said it lives.

    ``state`` is what the host last wrote (``online`` or ``stopped``); whether it is *alive*
    is :meth:`online` — a host that died (SIGKILL, power cut) never writes ``stopped``, its
    heartbeat just stops. On a shared store the heartbeat and ``stopped_at`` are the database's
    clock, and so is ``seen_at``: machines whose clocks disagree still agree who is online.
    """

    host_id: str
    kind: str
    machine: str
    pid: int
    since: datetime
    heartbeat: datetime
    epoch: int = 0
    state: str = "online"
    stopped_at: datetime | None = None
    accounts: dict[str, str] = field(default_factory=dict)
    version: str = ""
    #: the store's clock when this record was read (a shared store: hosts on several machines
    #: are judged against one clock, the database's); None: the asker's clock is the one
    seen_at: datetime | None = field(default=None, compare=False)
    #: this host's clock minus the database's at its last heartbeat, in seconds (a shared
    #: store; None: not measured — a one-machine store has one clock)
    clock_offset: float | None = field(default=None, compare=False)

    def silent_for(self, now: datetime) -> float:
        """Seconds since the last heartbeat — by the store's clock where it gave one."""
        return ((self.seen_at or now) - self.heartbeat).total_seconds()

    def online(self, now: datetime, lease_seconds: float) -> bool:
        return self.state == "online" and self.silent_for(now) <= lease_seconds

    def offline_since(self, now: datetime, lease_seconds: float) -> datetime | None:
        """When this host was last known alive, if it is offline now; None while online."""
        if self.online(now, lease_seconds):
            return None
        return self.stopped_at if self.state == "stopped" and self.stopped_at else self.heartbeat


@dataclass(frozen=True)
class ActionRequest:
    """An action asked of a goal's owner through the store (``state``: ``pending`` → ``taken``
    → ``answered``, or ``pending`` → ``expired`` when the asker gave up first)."""

    id: int
    to_host: str
    by: str
    request: dict[str, Any]
    state: str
    requested_at: datetime
    expires_at: datetime
    answer: dict[str, Any] | None = None
    answered_at: datetime | None = None


class Store(Protocol):
    """Persistence for goals, history, quota readings, meta, hosts and action requests.

    Attributes:
        epoch: the host's fencing epoch; when set, every write checks it is still current.
        host_id: the host this store writes for; when set, goals of other hosts are refused.
        read_only: opened for reading only (nothing is created, migrated or written).
        authority_seconds: how long an exact reading of another host outranks readings that
            are not exact.
        lease_seconds: a host whose heartbeat is older than this is offline (its goals hold
            no resume slots of other hosts).
    """

    epoch: int | None
    host_id: str | None
    read_only: bool
    authority_seconds: float
    lease_seconds: float

    @property
    def shared(self) -> bool:
        """Whether several hosts may use this store (their goals, readings, requests)."""
        ...

    @property
    def schema_version(self) -> int: ...

    def describe(self) -> str:
        """"the database /path" or "the shared store host/db", for messages."""
        ...

    def close(self) -> None: ...

    def ping(self) -> None:
        """Raise :class:`StoreUnavailable` when the store cannot be reached now."""
        ...

    def quick_check(self) -> str | None:
        """None when the store's own integrity check finds nothing wrong."""
        ...

    # -- goals ----------------------------------------------------------------------------------

    def get_goal(self, goal_id: str) -> Goal | None: ...

    def list_goals(self) -> list[Goal]: ...

    def goals_on_window(self, window_id: str, states: Sequence[GoalState],
                        peers: bool = False) -> list[Goal]:
        """Goals in one of ``states`` that draw on ``window_id``; with ``peers``, only those
        that share this host's resume slots there: its own, and (a shared store) those of
        hosts online now that use the same account for the window's provider."""
        ...

    def goals_due_on_window(self, window_id: str, now: datetime,
                            reasons: Sequence[PauseReason], peers: bool = False) -> list[Goal]:
        ...

    def transact(self, goal_id: str,
                 decide: Callable[[Goal | None], Mutation[T]]) -> Committed[T]: ...

    def transact_many(self, changes: Sequence[tuple[str, Callable[[Goal | None], Mutation[T]]]]
                      ) -> list[Committed[T]]:
        """:meth:`transact` for each ``(goal_id, decide)`` in turn, all in one transaction
        (a first discovery's goals: one commit, not one per goal). Any error rolls back all."""
        ...

    def remove_goal(self, goal_id: str, row: HistoryRow | None = None) -> HistoryRow | None: ...

    def adopt_goals(self) -> int:
        """Make every goal this host's (a one-machine store: the host owns all of it)."""
        ...

    # -- history --------------------------------------------------------------------------------

    def append_history(self, row: HistoryRow) -> HistoryRow: ...

    def history(self, goal: str | None = None, limit: int = 100,
                offset: int = 0) -> list[HistoryRow]: ...

    def count_history(self, goal: str | None = None) -> int: ...

    # -- quota readings -------------------------------------------------------------------------

    def save_reading(self, reading: QuotaReading) -> bool: ...

    def latest_readings(self, accounts: Sequence[str] | None = None) -> list[QuotaReading]: ...

    def latest_reading(self, account: str, window_id: str) -> QuotaReading | None: ...

    def series(self, window_id: str, since: datetime | None = None,
               account: str = "") -> list[tuple[datetime, float]]: ...

    def prune_series(self, before: datetime) -> int: ...

    # -- meta -----------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    # -- hosts ----------------------------------------------------------------------------------

    def take_epoch(self, host_id: str, floor: int = 0) -> int:
        """The next fencing epoch of ``host_id`` (above any before, and above ``floor``)."""
        ...

    def beat_host(self, record: HostRecord) -> bool:
        """Write the host's registry row; False when a newer epoch holds it (replaced)."""
        ...

    def stop_host(self, host_id: str, epoch: int, now: datetime) -> None: ...

    def list_hosts(self) -> list[HostRecord]: ...

    def get_host(self, host_id: str) -> HostRecord | None: ...

    # -- action requests ------------------------------------------------------------------------

    def post_request(self, to_host: str, request: dict[str, Any], by: str, now: datetime,
                     expires_at: datetime) -> int: ...

    def take_requests(self, host_id: str, now: datetime) -> list[ActionRequest]:
        """The pending, unexpired requests for ``host_id``, now marked taken (each once)."""
        ...

    def answer_request(self, request_id: int, answer: dict[str, Any], now: datetime) -> bool: ...

    def expire_request(self, request_id: int, now: datetime) -> bool:
        """Give up on a pending request; False when its owner took it first."""
        ...

    def get_request(self, request_id: int) -> ActionRequest | None: ...

    def prune_requests(self, before: datetime) -> int:
        """Drop answered and expired requests asked before ``before``."""
        ...
