"""Resume policies: the rules that hold an automatic resume back, and the forecast.

* :mod:`core.policies.hours` — allowed hours: weekly ranges in a named zone, DST included;
* :mod:`core.policies.goal_policy` — a goal's own priority, budget and hours (a frozen value);
* :mod:`core.goals.rules` — the global rules (reserve, hours, slots, settle time);
* :mod:`core.goals.gate` — what the resume entry point asks before an automatic resume;
* :mod:`core.goals.slots` — who holds a resume slot on a window, who waits, in which order;
* :mod:`core.goals.budget` — how much of a window a goal spent in this window's period;
* :mod:`core.goals.guard` — pauses a goal Goalkeeper resumed at the reserve or its budget;
* :mod:`core.quota.forecast` — when a window runs out at the current pace.

Everything here is pure over frozen values except :class:`core.goals.guard.PolicyGuard`, the
engine's hook on every stored reading. Nothing imports the engine.
"""
