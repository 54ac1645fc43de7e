"""A scriptable pipeline step for tests: ``fake_step.py '<JSON list of behaviours>'``.

Invocation number k (counted per step in the run directory, across attempts and resumes) follows
behaviour k (the last one repeats). A behaviour is an object with optional keys:

* ``sleep``: seconds to sleep first (``"forever"``: until killed);
* ``stdout`` / ``stderr``: text to print (``$SECRET:NAME`` prints the env var NAME);
* ``write``: {relative path: text} files to write into the run directory;
* ``effect``: a file to append ``<step>\\n`` to (a side effect to count);
* ``report``: an object written to ``$GOALKEEPER_REPORT`` (``$SECRET:NAME`` in ``detail`` too);
* ``items``: shorthand for ``report = {"status": "ok", "items": n}``;
* ``exit``: the exit code (default 0);
* ``marker``: a file created (in the run directory) as soon as the step starts.
"""

import json
import os
import sys
import time
from pathlib import Path


def expand(text: str) -> str:
    if text.startswith("$SECRET:"):
        return os.environ.get(text.split(":", 1)[1], "")
    return text


def write_report(spec: dict) -> None:
    report = spec.get("report")
    if "items" in spec:
        report = {"status": "ok", "items": spec["items"]}
    if report is not None:
        if isinstance(report.get("detail"), str):
            report["detail"] = expand(report["detail"])
        Path(os.environ["GOALKEEPER_REPORT"]).write_text(json.dumps(report))


def main() -> int:
    plan = json.loads(sys.argv[1])
    run_dir = Path(os.environ["GOALKEEPER_RUN_DIR"])
    step = os.environ["GOALKEEPER_STEP"]
    counter = run_dir / f".calls-{step}"
    calls = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(calls + 1))
    spec = plan[min(calls, len(plan) - 1)]
    if "marker" in spec:
        # written whole, then renamed: a test that sees the marker can read the pid at once
        partial = run_dir / (spec["marker"] + ".partial")
        partial.write_text(str(os.getpid()))
        partial.rename(run_dir / spec["marker"])
    if spec.get("sleep") == "forever":
        while True:
            time.sleep(0.05)
    time.sleep(float(spec.get("sleep", 0)))
    if "stdout" in spec:
        print(expand(spec["stdout"]))
    if "stderr" in spec:
        print(expand(spec["stderr"]), file=sys.stderr)
    for rel, text in spec.get("write", {}).items():
        (run_dir / rel).write_text(text)
    write_report(spec)
    if "effect" in spec:
        with open(spec["effect"], "a") as handle:
            handle.write(step + "\n")
    return int(spec.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
