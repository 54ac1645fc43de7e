"""Retries: the classification table and the backoff policies, apart from any sleeping."""
