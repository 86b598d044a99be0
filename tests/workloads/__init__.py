"""Workload factories (``--model tests.workloads.<module>:<factory>``) for real CPU profile runs."""
