"""Qt item models over what the bridge reports."""
