"""Files the installed program carries: the desktop entry, the AppStream metainfo and the icons.

Read through :mod:`importlib.resources` (``core.integration.resources``), so they are found the
same way in a clone, an installed wheel and a PyInstaller bundle. ``packaging/icons.py`` redraws
the icons.
"""
