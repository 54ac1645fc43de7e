"""Files the installed program carries: the desktop entry, the AppStream metainfo and the icons.

This folder installs as the package ``core.resources`` (``package-dir`` in ``pyproject.toml``:
in a wheel and a PyInstaller bundle it sits at ``core/resources/``; an editable install maps the
name here). Read through :mod:`importlib.resources` (``core.integration.resources``), so they are
found the same way in a clone, an installed wheel and a bundle. ``packaging/icons.py`` redraws
the icons.
"""
