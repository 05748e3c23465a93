"""ddlwmp's simulation path (formulations/ddlwmp/simulate.py, sec5.py, a_srpt.py, baselines.py,
online.py): facts a surviving mutant of the sample broke. Written for the mutation score (issue
36 item 5)."""

from __future__ import annotations
