"""Dialogs: goal details, settings."""
