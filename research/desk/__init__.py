"""The analyst's desk: editing a finished report into new versions (``edit``), regenerating a
section with an instruction (``regenerate``, its evidence ranking in ``material``), comparing
versions (``diff``) and the comments kept with a run (stored by ``research.store.comments``).

Versions are stored by ``research.store.versions``; exports read the current (or a given)
version through ``research.export.bundle.load_bundle``.
"""
