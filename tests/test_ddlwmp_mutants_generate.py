"""ddlwmp's workload generators (formulations/ddlwmp/generate.py, workloads.py): facts a
surviving mutant of the sample broke. Written for the mutation score (issue 36 item 5)."""

from __future__ import annotations
