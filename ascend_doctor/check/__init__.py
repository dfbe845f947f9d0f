"""`ascend-doctor check`: examine a machine before a job runs (versions, environment, devices)."""
