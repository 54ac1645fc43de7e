"""Hosts: the lease, this host in the store, other hosts, remote actions, the control socket."""
