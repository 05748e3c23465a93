"""ddlwmp: online scheduling of distributed jobs with mixed parallelism (the A-SRPT paper).

Work in progress (issue 3): the instance, schedule and ``evaluate`` are in :mod:`.model`.
The formulation is not registered with the engine until its algorithms are complete.
"""
