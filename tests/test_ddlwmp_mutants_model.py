"""ddlwmp's instance model (formulations/ddlwmp/model.py) and the policies' building blocks
(placement.py, policies.py): facts a surviving mutant of the sample broke. Written for the
mutation score (issue 36 item 5)."""

from __future__ import annotations
