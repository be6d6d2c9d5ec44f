"""The STORM pipeline (seeds 001/002): coordinator → planner → perspectives → conversations →
analysis → outline → reporter. ``runner.execute`` drives one run."""
