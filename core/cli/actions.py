"""The one path of every goal action the CLI sends through the host (``resume``, ``pause``,
``cancel``, ``auto-resume``, ``start``, ``goal set``): check the goal is known, ask its owner, print
the result and exit with its code."""

from __future__ import annotations

from core.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNKNOWN_GOAL,
    CliError,
    Context,
    warn,
)
from core.cli.render import no_data_text
from core.commands import ActionResult, Command
from core.i18n import N_, _, localized
from core.i18n.textfmt import local_time
from core.i18n.words import word
from core.models import Goal, Outcome


def require_goal(ctx: Context, goal_id: str) -> Goal:
    """Exit 3 when the store does not know the goal (checked before contacting the host)."""
    with ctx.reader() as store:
        if store is None:
            raise CliError(_("unknown goal {goal!r} ({why})").format(
                goal=goal_id, why=no_data_text(ctx)), EXIT_UNKNOWN_GOAL)
        goal = store.get_goal(goal_id)
    if goal is None:
        raise CliError(_("unknown goal {goal!r} (see `goalkeeper status`)").format(goal=goal_id),
                       EXIT_UNKNOWN_GOAL)
    return goal


def exit_code(result: ActionResult) -> int:
    if result.outcome is Outcome.UNKNOWN_GOAL:
        return EXIT_UNKNOWN_GOAL
    if result.outcome is Outcome.REFUSED:
        return EXIT_REFUSED
    if result.outcome is Outcome.FAILED:
        return EXIT_ERROR
    return EXIT_OK


def render_result(result: ActionResult) -> str:
    text = word(result.outcome)
    if result.outcome is Outcome.DEFERRED and result.not_before:
        text = _("{outcome} until {time}").format(outcome=text,
                                                  time=local_time(result.not_before))
    elif result.outcome is Outcome.QUEUED and result.not_before:
        text = _("{outcome}, starts at {time}").format(outcome=text,
                                                       time=local_time(result.not_before))
    if result.reason and result.reason != result.outcome.value:
        text = _("{outcome}: {reason}").format(outcome=text, reason=localized(result.reason))
    return f"{result.goal}: {text}"


def safe_mode_refusal(ctx: Context, goal_id: str) -> ActionResult | None:
    """The door's refusal when the host runs in safe mode — asked of the host when the store
    cannot tell the goal (a zero-byte store knows no goal, but "unknown goal" would send you
    looking for the wrong thing)."""
    view = ctx.host_view()
    safe = view.health.safe_mode if view.health is not None else None
    if not safe:
        return None
    return ActionResult(goal_id, Outcome.REFUSED, N_("safe mode: {reason}").format(reason=safe))


def run_action(ctx: Context, command: Command) -> int:
    try:
        goal = require_goal(ctx, command.goal)
    except CliError as exc:
        refusal = safe_mode_refusal(ctx, command.goal) if exc.code == EXIT_UNKNOWN_GOAL else None
        if refusal is None:
            raise
        return answer(ctx, refusal)
    owner = getattr(goal, "host", "")  # (tests stand in for require_goal)
    return answer(ctx, ActionResult.from_json(ctx.ask_owner(owner, command.to_json())))


def answer(ctx: Context, result: ActionResult) -> int:
    """Print the host's answer (a notice as a warning) and return its exit code."""
    if result.notice:
        warn(localized(result.notice))  # a line on stderr, never a prompt: scripts keep running
    ctx.emit(result.to_json(), lambda: render_result(result))
    return exit_code(result)
