"""Reading the JSON-lines files the fakes and the real CLIs write (logs, transcripts, rollouts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line of ``path`` as JSON, blank lines left out; ``[]`` when there is no file."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
