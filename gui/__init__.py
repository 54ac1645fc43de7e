"""The Goalkeeper desktop app: a PySide6 window and tray icon over the core, on one qasync loop.

``gui/app.py`` bootstraps; ``gui/bridge.py`` is the only module that talks to the core engine;
everything else renders what the bridge says and asks it to act.
"""
