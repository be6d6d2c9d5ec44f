"""Planning: the question syllabus and its templates, and plan review (read, edit, validate, approve)."""
