"""Figures, tables and widgets of the book (presentation only).

Modules, one concept each; matplotlib and ipywidgets are imported only when a figure or a widget
is built, so importing any of them (and the core) works without either:

``style``          lazy matplotlib, new axes, the shared axis finishers
``plots``          static figures that draw given numbers (Chapters 1-5, 8, 9)
``illustrations``  small uncertified computations drawn in the book (Algorithm 4 as published,
                   a Monte Carlo shuffle, the standard clone pair table)
``tables``         Table 1 and generic HTML tables
``hierarchy``      Figure 1: the hierarchy of decomposition-based bounds (a diagram)
``experiments``    central eps against n: points and panels of Figures 2 and 3 (Section 7)
``joint``          k-joint compositions at a fixed total eps0 (Section 6)
``stored``         the stored curves of ``book/data/figures.json``
``widgets``        the interactive figures and the calculator (Chapters 1, 5, 6, 7, 10)

Every certified number is computed by the front door (:func:`amp.epsilon`, :func:`amp.delta`,
:func:`amp.profile`) or a baseline; nothing here re-implements a search.
"""
