"""Widgets of the main window; each renders what the bridge reports."""
