"""Pipeline goals: the user's own multi-step jobs (sources, then stages), declared in TOML files.

Modules: :mod:`.goalfile` (the file model), :mod:`.protocol` (exit codes and report files),
:mod:`.machine` (the run state machine), :mod:`.steps` (one attempt of one step),
:mod:`.attempts` (the retry loop), :mod:`.run` (one run, phase by phase), :mod:`.checkpoint`
(the state file), :mod:`.coverage` (degraded delivery), :mod:`.schedule`, :mod:`.ledger` (user
quotas), :mod:`.registry` (added goal files) and :mod:`.provider` (the provider itself).
"""
