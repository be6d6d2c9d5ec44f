"""Planning: the question syllabus, its templates, and the validation of an edited plan.

Plan review itself (approve or cancel, which resumes the run) is ``research.jobs.review``."""
