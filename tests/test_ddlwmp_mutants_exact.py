"""ddlwmp's exact solvers and greedy schedule (formulations/ddlwmp/exact.py): facts a surviving
mutant of the sample broke. Written for the mutation score (issue 36 item 5)."""

from __future__ import annotations
