# pate_study: two commands do all the set-up on a fresh machine.
#   make figures   prepare the notebooks' datasets (mirror, then the official URLs; DATA=offline: mirror only,
#                  DATA=skip: none), regenerate every figure and table (PROFILE=paper by default; PROFILE=smoke for a
#                  quick pass), print a summary (also in build/summary.<profile>.md). JOBS=2 (the default)
#                  notebooks run side by side, longest first, each with OMP_NUM_THREADS=1 (the committed figures
#                  come from one thread per notebook: 04's CNN arms depend on the count); JOBS=1: one after another
#   make test      unit tests + every notebook executed with its smoke profile (and in JupyterLab + Chromium)
#   make lab       JupyterLab on copies of the notebooks in labs/ (git-ignored; adds --allow-root when run as root)
#   make lab-light the lecturer's path: a light venv (.venv-lab: pip install -e ".[lab]", no torch), the released
#                  teacher votes prepared in it (mirror, then network; a failure is said, the lab says it too), and
#                  JupyterLab on the student's copy labs/00_dp_primer.ipynb
#   make lab-votes only the votes, in the light venv (python -m data_recipes prepare pate2018-votes)
#   make handout   what students get instead of a clone (build/handout/pate_study-labs/ and .zip): the two labs, the
#                  package and its data recipes, the light requirements, the votes when the mirror has them
#                  (VOTES=folder to name them); never instructors/
#   make site      a static results site (build/site/) from the committed executed notebooks, nothing re-executed,
#                  built in the light venv (.venv-lab with ".[site]": no torch)
# Each creates or updates the virtual environment .venv from pyproject.toml on first use.

PYTHON       ?= python3
VENV         ?= .venv
PROFILE      ?= paper
NOTEBOOKS    ?=
DATA         ?= network
PYTEST_ARGS  ?=
JOBS         ?= 2
# threads per notebook kernel for make figures (set it in the environment to change it)
OMP_NUM_THREADS ?= 1
# torch is installed first and on its own, so that pip never resolves the CUDA build on a CPU machine.
# Here `torch==2.13.0` is served as a local CPU wheel. Elsewhere, on a CPU-only machine, use
#   make TORCH_INDEX=https://download.pytorch.org/whl/cpu test
# and on a GPU machine prefer the conda route (environment.yml) or the default PyPI build.
TORCH_SPEC   ?= torch==2.13.0
TORCH_INDEX  ?=

# make splits a target or prerequisite at spaces: a VENV or LOCK path holding one would name other files (a venv
# built at the wrong path). Refused at once, naming the variable.
$(if $(word 2,$(VENV)),$(error VENV="$(VENV)": a path with a space, which make cannot use as a target; \
  give one without spaces, e.g. VENV=.venv))
$(if $(word 2,$(LOCK)),$(error LOCK="$(LOCK)": a path with a space, which make cannot use as a prerequisite; \
  give one without spaces, or LOCK= to install from pyproject.toml's ranges))
$(if $(VENV),,$(error VENV is empty; give the virtual environment's folder, e.g. VENV=.venv))

VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.pate_study-installed

.PHONY: venv figures test test-fast data data-ecg data-votes lab lab-light lab-venv lab-votes handout site site-venv \
        clean-build benchmarks scale

venv: $(STAMP)

# The exact versions and hashes of everything but torch (requirements.lock; its first lines say how to regenerate
# it, tests/repository/test_environment_sync.py keeps it in step with pyproject.toml). torch stays pinned by version only
# (TORCH_SPEC): the same version is another file per machine (CPU wheel, CUDA build, conda), so no one hash fits.
# LOCK= (empty) installs from pyproject.toml's ranges instead, e.g. on a Python other than the lock's 3.11.
LOCK         ?= requirements.lock

# The lock is checked before the venv is created: an empty lock (or one without hashes) would install nothing but
# the package itself and leave a venv without its dependencies.
$(STAMP): pyproject.toml $(LOCK)
	@if [ -n "$(LOCK)" ] && ! grep -q -e '--hash=sha256:' "$(LOCK)"; then \
	  echo "error: LOCK=$(LOCK): empty, or no pinned package with a hash in it; restore it" \
	    "(git checkout -- $(LOCK)) or pass LOCK= to install from pyproject.toml's ranges; nothing was installed" >&2; \
	  exit 2; fi
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(VPY) -c "import torch" 2>/dev/null && echo "torch already present: $$($(VPY) -c 'import torch; print(torch.__version__)')" || \
	  $(VPY) -m pip install --quiet --disable-pip-version-check $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(if $(LOCK),$(VPY) -m pip install --quiet --disable-pip-version-check --require-hashes -r $(LOCK) && \
	  $(VPY) -m pip install --quiet --disable-pip-version-check --no-deps -e .,\
	  $(VPY) -m pip install --quiet --disable-pip-version-check -e ".[research,test,site]")
	$(VPY) -m ipykernel install --prefix $(VENV) --name python3 >/dev/null
	@touch $(STAMP)

figures: $(STAMP)
	OMP_NUM_THREADS=$(OMP_NUM_THREADS) MKL_NUM_THREADS=$(OMP_NUM_THREADS) $(VPY) -m pate_study.tooling.runner figures \
	  --profile $(PROFILE) --data $(DATA) --jobs $(JOBS) $(if $(NOTEBOOKS),--notebooks $(NOTEBOOKS))

test: $(STAMP)
	$(VPY) -m pytest $(PYTEST_ARGS)

# A contributor's tier: no notebook, no browser, no Ray cluster, no test marked slow (under 3 minutes on 2 quiet
# cores); `make test` stays the full suite and what CI runs.
FAST_MARKERS := not notebook and not lab and not site and not light and not ray and not slow
test-fast: $(STAMP)
	$(VPY) -m pytest -q -m "$(FAST_MARKERS)" $(PYTEST_ARGS)

data: $(STAMP)
	$(VPY) -m data_recipes prepare all

# short names used in the issues and notebooks: make data-ecg, make data-votes
data-ecg: data-ecg-heartbeat
data-votes: data-pate2018-votes

data-%: $(STAMP)
	$(VPY) -m data_recipes prepare $*

benchmarks: $(STAMP)
	$(VPY) benchmarks/bench_accountants.py
	$(VPY) benchmarks/bench_ensemble.py

# The Audio Set pipeline at the thesis's sizes on synthetic, memory-mapped stand-ins: time and memory per stage
# (2.5 GiB of scratch data, deleted afterwards; about 3-5 minutes on 2 cores). See benchmarks/README.md.
scale: $(STAMP)
	mkdir -p build && OMP_NUM_THREADS=1 $(VPY) benchmarks/bench_scale.py --out build/scale.json

# Jupyter refuses to run as root without --allow-root (containers, course VMs): add it only then.
# Students and readers work on their own copies under labs/ (git-ignored; an existing copy is kept): JupyterLab's save
# and autosave never rewrite a committed notebook.
lab: $(STAMP)
	$(VPY) -m pate_study.tooling.labcopies --all
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) labs/

# The light venv: the core dependencies and the lab extra (no torch, no ray, no papermill); `make site` adds the site
# extra to the same venv.
LAB_VENV   ?= .venv-lab
LAB_STAMP  := $(LAB_VENV)/.pate_study-lab-installed
SITE_STAMP := $(LAB_VENV)/.pate_study-site-installed

$(LAB_STAMP): pyproject.toml
	@test -x $(LAB_VENV)/bin/python || $(PYTHON) -m venv $(LAB_VENV)
	$(LAB_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e ".[lab]"
	@touch $(LAB_STAMP)

$(SITE_STAMP): pyproject.toml
	@test -x $(LAB_VENV)/bin/python || $(PYTHON) -m venv $(LAB_VENV)
	$(LAB_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e ".[site]"
	@touch $(SITE_STAMP)

lab-venv: $(LAB_STAMP)

site-venv: $(SITE_STAMP)

lab-votes: $(LAB_STAMP)
	$(LAB_VENV)/bin/python -m data_recipes prepare pate2018-votes

lab-light: $(LAB_STAMP)
	$(LAB_VENV)/bin/python -m pate_study.tooling.labcopies
	@$(LAB_VENV)/bin/python -m data_recipes prepare pate2018-votes || \
	  echo "the votes could not be prepared now: the lab's first box says so and how to get them"
	$(LAB_VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) labs/00_dp_primer.ipynb

# Standard library only: any Python 3.11+ of the clone writes it
handout:
	$(PYTHON) -m pate_study.tooling.labcopies --handout build/handout $(if $(VOTES),--votes $(VOTES))

site: $(SITE_STAMP)
	$(LAB_VENV)/bin/python -m pate_study.tooling.site

clean-build:
	rm -rf build/
