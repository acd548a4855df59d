"""The reproduction report: every published table and seed-paper claim against tvbo's run files.

A TVBO researcher must be able to trust a comparison, so a reader must see why each cell is what
it is, and no number in the report is typed by hand. One module per question a reader asks:

* :mod:`~tvbo.analysis.reproduction.spec` -- what the spec (``config/reproduction.yaml``) says:
  its sections and objects; :mod:`~tvbo.analysis.reproduction.spec_yaml` reads and validates it;
* :mod:`~tvbo.analysis.reproduction.campaigns` -- which run files the report reads, how they were
  made, and which stand in for another campaign;
* :mod:`~tvbo.analysis.reproduction.orderings` -- how two algorithms are ordered on each side
  (the tie rule) and the tallies of agreement;
* :mod:`~tvbo.analysis.reproduction.paper_tables` -- one published table against its campaign;
* :mod:`~tvbo.analysis.reproduction.differences` -- why a pair is ordered differently, judged by
  the spec's predictions (:mod:`~tvbo.analysis.reproduction.predict`) and printed with evidence
  measured from the runs (:mod:`~tvbo.analysis.reproduction.evidence`);
* :mod:`~tvbo.analysis.reproduction.fit_section` -- whether the fitted temporal lengthscales stay
  inside the horizon;
* :mod:`~tvbo.analysis.reproduction.sensitivity` -- whether the orderings hold at every emulated
  hardware speed;
* :mod:`~tvbo.analysis.reproduction.claims` -- whether the seed papers' headline claims hold;
* :mod:`~tvbo.analysis.reproduction.report` -- the whole report (``tvbo reproduce``), rendered with
  :mod:`~tvbo.analysis.reproduction.markdown`'s number format and tables.

Nothing is imported here: the workflow reads the spec (:func:`~.spec_yaml.load_spec`) when it
parses, without loading the report's table and figure code.
"""
