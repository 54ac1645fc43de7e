"""Goalkeeper's desktop app (PySide6 on a qasync loop). It talks to ``core`` through one bridge."""
