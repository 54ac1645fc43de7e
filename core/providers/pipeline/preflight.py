"""The source check: can a step start at all? (program, working directory, quota, secrets)

Run at the ``source_check`` phase for every step that has not completed, so that a missing
program, an unknown quota or a secret absent from the keyring is found before any source spends
quota — a source that fails it is missing; a stage that fails it blocks the run at once.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from core.providers.pipeline.goalfile import StepSpec


@dataclass(frozen=True)
class Problem:
    reason: str  # config_error or auth_failed
    detail: str

    @property
    def auth(self) -> bool:
        return self.reason == "auth_failed"


def check_step(spec: StepSpec, base_dir: Path, environ: Mapping[str, str],
               secret_problems: Mapping[str, Problem],
               quota_problem: Callable[[str, float], str | None]) -> Problem | None:
    """The first reason ``spec`` cannot start, or None."""
    cwd = (base_dir / spec.cwd).resolve()
    if not cwd.is_dir():
        return Problem("config_error", f"working directory {cwd} does not exist")
    program = spec.command[0]
    problem = _program_problem(program, cwd, {**environ, **spec.env}.get("PATH"))
    if problem is not None:
        return problem
    if spec.quota is not None and (why := quota_problem(spec.quota, spec.cost)):
        return Problem("config_error", why)
    for name in spec.secret_names():
        if name in secret_problems:
            return secret_problems[name]
    return None


def _program_problem(program: str, cwd: Path, path_var: str | None) -> Problem | None:
    if os.sep in program:
        candidate = Path(program) if os.path.isabs(program) else cwd / program
        if not candidate.is_file():
            return Problem("config_error", f"program {candidate} does not exist")
        if not os.access(candidate, os.X_OK):
            return Problem("config_error", f"program {candidate} is not executable")
        return None
    if shutil.which(program, path=path_var) is None:
        return Problem("config_error", f"program {program!r} is not on PATH")
    return None
