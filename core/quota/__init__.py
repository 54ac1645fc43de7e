"""Quotas: the quota machine with its hysteresis, the view decisions read, user quotas."""
