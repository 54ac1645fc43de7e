"""Notifications that reach you where you are: the kinds the tray shows, ntfy and webhooks.

Kept free of imports on purpose: :mod:`core.settings` imports :mod:`core.notices`, and the
service (:mod:`core.notify.service`) imports the settings.
"""
