# amp: library + Jupyter Book. All targets work offline except for PyPI, Debian apt and npm.
#
#   make book    venv + offline assets + full book build (warnings are errors) -> _build/html
#                (redone only when an input changed since the last build; make book-clean: always)
#   make test    THE test command (CI runs `make book` then `make test` via .ci/run): the book
#                (make book), unit tests, doctests, clean install of the wheel, notebook tests
#                (nbval), browser checks of the site, of JupyterLab and of the live app, nbgrader
#   make live    the interactive chapters as an app (Voila, live kernel, code hidden, offline)
#                on http://127.0.0.1:$(LIVE_PORT)/ (own venv .venv-live; scripts/live/)
#   make lab     the chapters in JupyterLab 4 (jupyterlab-myst, live widgets, offline) on
#                http://127.0.0.1:$(LAB_PORT)/ (same venv .venv-live; make lab-venv: only the venv)
#   make venv    only create/update .venv (idempotent; a stamp file makes it instant when done)
#   make doctest the docstring examples of amp (the API reference pages)
#   make wheel   build the library wheel into _build/dist; make install-check: install it alone
#                into a fresh venv (numpy + scipy only) and call the CLI
#   make assets  only fetch the widgets loader and chapter 12's dataset (both gitignored)
#   make clean   remove _build and artifacts (keeps .venv)
#   make student the student edition (no solutions, no hidden checks) -> _build/student/ + zip
#   make student-site  the student edition as a web site for students (no solutions, no hidden
#                checks, no sealed answers; offline), checked for leaks -> _build/student-site/html
#   make pdf     the whole book as one PDF (single-page HTML build printed by Chromium)
#                -> _build/pdf/amp-book.pdf
#   make assignments  the graded problem sets as an nbgrader course directory (own venv
#                .venv-grade; make grade-venv: only the venv) -> _build/assignments

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON    ?= python3
VENV      ?= .venv
BIN       := $(VENV)/bin
STAMP     := $(VENV)/.amp-installed
LIVE_VENV ?= .venv-live
LIVE_BIN  := $(LIVE_VENV)/bin
LIVE_STAMP:= $(LIVE_VENV)/.amp-live-installed
LIVE_DIR  := _build/live
WIDGETS   := book/_static/widgets/embed.js
DATASETS  := book/data/vega/zipcodes.csv
LIVE_PORT ?= 8866
GRADE_VENV ?= .venv-grade
GRADE_BIN := $(GRADE_VENV)/bin
GRADE_STAMP := $(GRADE_VENV)/.amp-grade-installed
COURSE_DIR ?= _build/assignments
JB_FLAGS  ?= -W -n --keep-going --all

.PHONY: help venv lab-venv grade-venv assets book book-clean test doctest wheel install-check live live-check lab clean \
	student student-site pdf assignments

help:
	@sed -n '3,24p' Makefile | sed 's/^# \{0,1\}//'

# -------------------------------------------------------------------------- environment
# Re-run when requirements or the package metadata change; otherwise the stamp makes it a no-op.
$(STAMP): requirements.txt pyproject.toml book/pyproject.toml
	@test -x $(BIN)/python || { echo ">> creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo ">> installing requirements.txt, amp and the book's package ampbook (editable) into $(VENV)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e . -e book
	$(BIN)/python -m pip check
	@touch $@

venv: $(STAMP)

lab-venv: $(LIVE_STAMP)

# The live app has its own venv: .venv stays exactly requirements.txt (the test environment,
# which builds the app's notebooks without Voila: tests/test_live.py).
# The same venv serves `make lab` (JupyterLab 4 + jupyterlab-myst: requirements-lab.txt).
$(LIVE_STAMP): requirements.txt requirements-live.txt requirements-lab.txt pyproject.toml book/pyproject.toml
	@test -x $(LIVE_BIN)/python || { echo ">> creating $(LIVE_VENV)"; $(PYTHON) -m venv $(LIVE_VENV); }
	@echo ">> installing requirements.txt, requirements-live.txt, requirements-lab.txt and amp (editable) into $(LIVE_VENV)"
	$(LIVE_BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt \
		-r requirements-live.txt -r requirements-lab.txt
	$(LIVE_BIN)/python -m pip install --quiet --disable-pip-version-check -e . -e book
	$(LIVE_BIN)/python -m pip check
	@touch $@

# nbgrader has its own venv too (it brings JupyterLab 4 and Notebook 7): requirements-grade.txt
# (requirements.txt and nbgrader's pins). Used by `make assignments` and tests/test_assignments.py.
$(GRADE_STAMP): requirements.txt requirements-grade.txt pyproject.toml book/pyproject.toml
	@test -x $(GRADE_BIN)/python || { echo ">> creating $(GRADE_VENV)"; $(PYTHON) -m venv $(GRADE_VENV); }
	@echo ">> installing requirements-grade.txt (with requirements.txt) and amp (editable) into $(GRADE_VENV)"
	$(GRADE_BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-grade.txt
	$(GRADE_BIN)/python -m pip install --quiet --disable-pip-version-check -e . -e book
	$(GRADE_BIN)/python -m pip check
	@touch $@

grade-venv: $(GRADE_STAMP)

# -------------------------------------------------------------------------- offline assets
$(WIDGETS): scripts/fetch_widgets.sh scripts/npm_fetch.sh
	scripts/fetch_widgets.sh book/_static/widgets
	@touch $@

$(DATASETS): scripts/fetch_datasets.sh scripts/npm_fetch.sh
	scripts/fetch_datasets.sh book/data/vega
	@touch $@

assets: $(WIDGETS) $(DATASETS)

# -------------------------------------------------------------------------- book
# Every build is a full one (--all, every notebook executed: execute_notebooks force). It is
# redone when any input changed since the last successful build (the book, the package, the
# scripts the chapters read, the configuration, the pins), so `make test` right after `make book`
# tests the site just built instead of building it twice; `make book-clean` forces a rebuild.
BOOK_INPUTS := $(wildcard $(shell { git ls-files --cached --others --exclude-standard -- book amp \
	scripts _config.yml _toc.yml requirements.txt pyproject.toml 2>/dev/null || \
	find book amp scripts -type f; } | grep -v '^book/data/vega/'))
BOOK_STAMP := _build/html/.amp-book-built

$(BOOK_STAMP): $(STAMP) $(WIDGETS) $(DATASETS) $(BOOK_INPUTS)
	@echo ">> building the book: jupyter-book build . $(JB_FLAGS)"
	env -u MPLBACKEND $(BIN)/jupyter-book build . $(JB_FLAGS)
	@touch $@
	@echo ">> book: $(CURDIR)/_build/html/index.html"

book: $(BOOK_STAMP)
	@echo ">> the site in _build/html is built from the current sources"

# The student edition as a static site (issue 36): _build/student-site/html, for students to read
# without seeing answers. scripts/student_site.py takes the chapters as `make book` has just
# executed them (_build/jupyter_execute), applies the student edition's rules
# (scripts/student_edition.py: no solutions, hidden checks, answer lines, expected=) and builds
# them with execution off: the figures and printed numbers stay, and a cell keeps its outputs
# only when the student edition keeps it unchanged, it calls no check() and it reads no name a
# removed or rewritten cell may have changed (no solution's computation, no verdict, no answer
# reaches a page). Executing the student notebooks instead would cost another ~7 minutes, and a
# site of code only would lose every figure. Widgets as on the main site: the kernel-free
# figures (cells tagged static-only) replace them. Not copied: book/coursekit (answers.json,
# the sealed answers) and book/data. Same venv, same offline assets, same flags (warnings are
# errors), a preface and a title that say "student edition". Then the checks of the built site
# (tests/test_student_site.py -k built_site: every page and exercise, nothing remote, no leak)
# run on it; the stamp is written only if they pass, and a site that fails them is moved to
# _build/student-site/rejected (no leaking site where one publishes). Not a step of `make book`
# (it adds 1-2 minutes); the small site of tests/test_student_site.py, built by `make test`,
# holds the rules. Publish: copy _build/student-site/html to any static host (self-contained).
STUDENT_SITE_STAMP := _build/student-site/html/.amp-student-site-built

$(STUDENT_SITE_STAMP): $(BOOK_STAMP) scripts/student_site.py scripts/student_edition.py
	@echo ">> building the student site: scripts/student_site.py -> _build/student-site/html"
	env -u MPLBACKEND $(BIN)/python scripts/student_site.py --out _build/student-site
	AMP_REQUIRE_STUDENT_SITE=1 AMP_STUDENT_SITE_DIR=_build/student-site/html \
		$(BIN)/python -m pytest tests/test_student_site.py -k built_site -p no:cacheprovider -q \
	|| { rm -rf _build/student-site/rejected; mv _build/student-site/html _build/student-site/rejected; \
		echo ">> the student site failed its checks: moved to _build/student-site/rejected (do not publish it)"; exit 1; }
	@touch $@
	@echo ">> student site: $(CURDIR)/_build/student-site/html/index.html"

student-site: $(STUDENT_SITE_STAMP)

# From scratch: no execution cache, no doctrees, no stale pages.
book-clean: $(STAMP) $(WIDGETS) $(DATASETS)
	rm -rf _build
	$(MAKE) --no-print-directory book

# -------------------------------------------------------------------------- tests
test:
	scripts/run_tests.sh

doctest: $(STAMP)
	$(BIN)/python -m pytest --doctest-modules amp book/ampbook -p no:cacheprovider -o addopts="" -q

wheel:
	$(PYTHON) -m pip wheel . --no-deps -w _build/dist
	rm -rf build

install-check:
	scripts/check_install.sh

# -------------------------------------------------------------------------- live
# scripts/live/prepare.py writes $(LIVE_DIR)/app (the interactive chapters with MyST converted,
# removed cells removed, and a landing page index.ipynb) and the Voila template "amp" (no CDN).
# --Voila.mathjax_url=null: Voila's frontend then uses its bundled MathJax 3 instead of cdnjs.
# Culling: the kernel of a page left open without a connection stops after 10 idle minutes.
# jupyterlab-myst (make lab, same venv) is kept out of Voila: it fails to load there (a console
# error on every page), and the app's MyST is converted by scripts/live/myst.py anyway.
# Check a running server: .venv/bin/python scripts/live/check.py http://127.0.0.1:$(LIVE_PORT)
# Voila is started by scripts/live/serve.py, which first installs the book's kernel guard (its
# sliced channel polls, book/_ext/amp_kernel_guard.py) into Voila's process (issue 33).
live: $(LIVE_STAMP) $(DATASETS)
	$(LIVE_BIN)/python scripts/live/prepare.py --out $(LIVE_DIR)
	@echo ">> the live book: http://127.0.0.1:$(LIVE_PORT)/  (Ctrl-C to stop)"
	JUPYTER_PATH=$(CURDIR)/$(LIVE_DIR)/share $(LIVE_BIN)/python scripts/live/serve.py \
		$(LIVE_DIR)/app --no-browser \
		--port=$(LIVE_PORT) --Voila.ip=127.0.0.1 --template=amp --strip_sources=True \
		--show_tracebacks=False --theme=light --Voila.mathjax_url=null \
		--Voila.mathjax_config=null --MappingKernelManager.cull_interval=60 \
		--MappingKernelManager.cull_idle_timeout=600 \
		--VoilaConfiguration.extension_denylist=jupyterlab-myst

# The live app served on a free port and checked in Chromium at 1280 and 390 px (landing page,
# chapter 1, the calculator), server started and stopped by the test; a step of `make test`.
# A page that does not render within 240 s is tried once more and the retry is reported
# (scripts/live/check.py); in one of four fresh-clone runs one page at 1280 px failed that way.
live-check: $(LIVE_STAMP) $(STAMP)
	AMP_REQUIRE_LIVE=1 $(BIN)/python -m pytest tests/test_live.py -m slow \
		-k test_live_server_offline_and_clean -p no:cacheprovider -v

# -------------------------------------------------------------------------- lab
# The chapters in JupyterLab 4 with jupyterlab-myst (exercises, proofs, figures and references
# rendered as on the site) and live widgets; offline: no news, no update check, and JupyterLab's
# MathJax is its own; no extension manager querying PyPI. The server listens on 127.0.0.1 only and prints its URL with a token.
# tests/test_lab.py drives the same command in Chromium (a step of `make test`).
LAB_PORT ?= 8888
lab: $(LIVE_STAMP) $(DATASETS)
	@echo ">> JupyterLab on http://127.0.0.1:$(LAB_PORT)/ (the URL with its token follows; Ctrl-C to stop)"
	cd book && ../$(LIVE_BIN)/python -m jupyterlab --no-browser --ServerApp.ip=127.0.0.1 \
		--ServerApp.port=$(LAB_PORT) --ServerApp.port_retries=0 --LabApp.news_url=None \
		--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
		--LabApp.extension_manager=readonly $(if $(filter 0,$(shell id -u)),--allow-root)

# -------------------------------------------------------------------------- course kit
# The student edition: the repository's notebooks are the instructor edition; this writes them
# without solutions, hidden checks and outputs (scripts/student_edition.py, standard library only).
student: $(DATASETS)
	$(PYTHON) scripts/student_edition.py --out _build/student

# The sealed answers of the student edition's checks (book/coursekit/answers.json): executes the
# instructor notebooks that call check() and records each expected value (re-run when nbval
# says a sealed answer is stale).
answers: $(STAMP) $(DATASETS)
	$(BIN)/python scripts/record_answers.py

# One PDF of the whole book: jupyter-book's singlehtml builder (executes every chapter) into
# _build/pdf/src, then Chromium (Playwright, /usr/bin/chromium) prints it once MathJax is done,
# with scripts/pdf/amp-print.css (no on-screen gradients or shadows), and scripts/pdf/compact.py
# repacks the file with object streams (58 MB -> ~9 MB; tests/test_pdf.py checks the size).
pdf: $(STAMP) $(WIDGETS) $(DATASETS)
	env -u MPLBACKEND $(BIN)/python scripts/build_pdf.py --out _build/pdf

# The graded problem sets (issue 36): assignments/source/<ps>/<ps>.ipynb are the instructor's
# notebooks (solutions between nbgrader's markers, hidden tests, rubrics); this writes the nbgrader
# course directory $(COURSE_DIR) (nbgrader_config.py, source/, release/ = the student versions,
# gradebook.db) by nbgrader's own generate_assignment. An existing gradebook, submitted/ and
# autograded/ are kept (source/ and release/ are rewritten). Offline. nbgrader runs alembic (the
# gradebook's migrations) from PATH: the venv's bin comes first.
assignments: $(GRADE_STAMP)
	@test -n "$(strip $(COURSE_DIR))" || { echo "COURSE_DIR is empty"; exit 2; }
	mkdir -p $(COURSE_DIR)
	rm -rf $(COURSE_DIR)/source
	cp -R assignments/source $(COURSE_DIR)/source
	cp assignments/nbgrader_config.py $(COURSE_DIR)/nbgrader_config.py
	cd $(COURSE_DIR) && PATH="$(abspath $(GRADE_BIN)):$$PATH" \
		nbgrader generate_assignment "*" --force --log-level=WARN
	@echo ">> course directory: $(abspath $(COURSE_DIR)) (release/ holds the student versions)"

clean:
	rm -rf _build artifacts
