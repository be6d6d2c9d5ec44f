"""Evidence: passages of saved sources that answer syllabus questions, judged in one place and
shared by coverage, steering, the report, follow-ups and the Coverage page."""
