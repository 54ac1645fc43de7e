"""Installing Goalkeeper into the desktop and the service manager (Qt-free).

``desktop`` writes the menu entry, the icons, the AppStream metainfo and the autostart entry
under the XDG base directories; ``service`` writes a systemd user unit (Linux) or a launchd agent
(macOS) that runs ``goalkeeper daemon``. Both write only files that carry Goalkeeper's mark and
remove only those.
"""
