"""The set-up assistant (issue 22): :mod:`.assistant` finds and applies; the app's dialog and
``goalkeeper setup`` are its two faces."""
