"""The book's own code: its figures, tables, widgets and chapter 12's accuracy study.

Not part of the library: ``amp-shuffle``'s wheel holds none of it. This package is the book's
second distribution (``book/pyproject.toml``, ``pip install -e book``); it was ``amp.viz`` and
``amp.accuracy`` until issue 34 (those names remain as deprecated aliases for one release).

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
``rounds``         Chapter 11's many-rounds figures and widget (stored curves, live redraws)
``limits``         a widget's redraw in a child process, bounded in time and memory
``accuracy``       frequency estimation at a certified (eps, delta) (Chapter 12)

Every certified number is computed by the front door (:func:`amp.epsilon`, :func:`amp.delta`,
:func:`amp.profile`) or a baseline; nothing here re-implements a search.
"""
