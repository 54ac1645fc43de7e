"""The core's vocabulary as people read it: states, pause reasons, triggers, outcomes, exactness.

The enum values are data (the store, ``--json``, the logs); these are their words, marked so the
catalogue has them. :func:`word` shows one in the current language: ``paused`` → ``已暂停``,
``already_running`` → ``already running`` in English. The engine's templates use the same words
(``"not paused: {state}"``), so :func:`core.i18n.localized` translates them inside a reason too.
"""

from __future__ import annotations

from enum import StrEnum

from core.i18n import N_, localized

WORDS = (
    # GoalState
    N_("idle"), N_("running"), N_("paused"), N_("resuming"), N_("done"), N_("cancelled"),
    N_("failed"),
    # PauseReason
    N_("quota"), N_("user"), N_("auth"), N_("error"), N_("external"), N_("interrupted"),
    # Trigger
    N_("manual"), N_("auto"), N_("startup"), N_("wake"),
    # Outcome (those not above)
    N_("resumed"), N_("already running"), N_("already resuming"), N_("deferred"),
    N_("refused"), N_("unknown goal"), N_("already paused"), N_("updated"), N_("unchanged"),
    N_("queued"),
    # Exactness
    N_("exact"), N_("inferred"), N_("estimated"), N_("stale"),
    # QuotaKind
    N_("periodic"), N_("capacity"), N_("token bucket"),
    # ChannelState (notifications)
    N_("ok"), N_("retrying"), N_("failing"), N_("off"),
    # pipeline run states (RunState, and coverage.display_state)
    N_("abandoned"), N_("blocked"), N_("triggered"), N_("source check"), N_("fetching"),
    N_("aggregating"), N_("partial aggregating"), N_("filtering"), N_("delivering"),
    N_("completed"),
    # resume-policy rules (Deferral.rule, a history row's "rule")
    N_("allowed hours"), N_("reserve"), N_("waiting for a slot"), N_("budget"),
    N_("waiting for the reset"),
    # host kinds (host.json)
    N_("daemon"), N_("gui"), N_("demo"), N_("store restore"),
    # what a command can tell about the host (HostView.state)
    N_("not running"), N_("not responding"),
    # integration.files.Change (desktop and service files)
    N_("written"), N_("removed"), N_("absent"), N_("kept"),
)

#: pydantic's messages that settings errors and the settings dialog show (its own texts, so
#: :func:`core.i18n.localized` can translate them there)
PYDANTIC = (
    N_("Input should be greater than or equal to {ge}"),
    N_("Input should be greater than {gt}"),
    N_("Input should be less than or equal to {le}"),
    N_("Input should be less than {lt}"),
    N_("Input should be a valid number, unable to parse string as a number"),
    N_("Input should be a valid integer, unable to parse string as an integer"),
    N_("Input should be a valid integer, got a number with a fractional part"),
    N_("Input should be a valid boolean, unable to interpret input"),
    N_("Input should be a valid string"),
    N_("Input should be a finite number"),
    N_("Input should be {expected}"),
    N_("String should have at least {min_length} character"),
    N_("String should have at least {min_length} characters"),
    N_("String should have at most {max_length} characters"),
    N_("String should match pattern {pattern}"),
    N_("Extra inputs are not permitted"),
    N_("Field required"),
)


#: who asked (a history row's ``origin``) as people read it; an unknown origin shows as it is
ORIGINS = {"gui": N_("desktop app"), "cli": N_("CLI"), "scheduler": N_("scheduler"),
           "tray": N_("tray"), "policy": N_("resume policy"), "demo": N_("demo")}


def origin_word(origin: str | None) -> str:
    """A history row's origin (``scheduler``) as a word (``调度器``); ``-`` for none."""
    if not origin:
        return "-"
    return localized(ORIGINS[origin]) if origin in ORIGINS else origin


def word(value: StrEnum | str) -> str:
    """An enum value (``already_running``) as a word (``already running``), translated."""
    return localized(str(value).replace("_", " "))
