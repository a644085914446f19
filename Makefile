# Set-up and checks for coflowkit. Needs only python3 (3.11+), cargo and
# access to PyPI and crates.io; everything else goes into .venv.
#
#   make demo   .venv with the runtime pins, release build (every command, the
#               runtime's `coflowkit coordinator|agent` too), `coflowkit simulate`
#   make test   .venv with the dev pins, dev build, mypy and stubtest, cargo tests, pytest; the
#               randomized tests with one fixed seed (same verdict everywhere)
#   make fuzz [SEEDS=N]  the randomized tests again with N fresh seeds (default
#               10): prints each failure's seed and the command that replays it
#   make repro-dcas   release build, then D-CAS's section V reproduced into
#               docs/reproductions/dcas.md at flow level, and D-CAS's mix at the testbed's scale at
#               flow and packet level (examples/reproductions/dcas_packet.py): 24 minutes on the
#               shared 2 cores beside two builds, the packet level 3 of them
#   make repro-tafe   release build, then TAFE (docs/reproductions/tafe.md) at flow and packet level
#               (6.3 minutes of CPU; 12 minutes on the shared 2 cores at load 8-9, a rebuild of the
#               packet crate included)
#   make repro-karuna release build, then Karuna and PIAS (docs/reproductions/karuna.md) at flow and
#               packet level, with the one-change runs that split each packet/flow gap
#               (examples/reproductions/karuna/split.py): 31 minutes on the shared 2 cores at load 7-16,
#               the split 11 of them
#   make repro-aalo   release build, then the Aalo reproduction (about half an
#               hour on 2 cores): docs/reproductions/aalo.md and its figures
#   make validate-decomposed  release build, then the decomposed engine against the packet engine on
#               issue 69's 48-cell grid (examples/decomposed/validate.py): the packet engine's runs are
#               stored per cell in results/validate-decomposed/packet and resumed, the decomposed ones
#               rerun; the table and figure into docs/decomposed-engine.md (about 100 minutes of CPU with
#               the shared 2 cores at load 13-16, the data-mining cells four fifths of it, half of it
#               the packet engine's, which a rerun skips)
#   make repro-claims the table of every seed-paper claim (docs/reproductions/README.md), read
#               from the reproduction pages (seconds; every repro-* target ends with it)
#   make repro-memcached release build, then Memcached multi-gets through the runtime on the
#               testbed (root; docs/reproductions/memcached.md)
#   make repro-baraat release build, then the Baraat reproduction (scaled down, and
#               the idealized policies at the paper's scale): the packet level first
#               (examples/reproductions/baraat/packet.py, about 50 minutes on one core, rerun on every call),
#               then the flow level's stores (resumed; about 2.5 hours of one core on the shared 2: the
#               paper-scale tree 45 minutes, the data-parallel batches 45, the rest 60):
#               docs/reproductions/baraat.md and its figures

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export VIRTUAL_ENV := $(abspath $(VENV))

# One seed for every proptest of `make test` (CI's and everybody's): the same
# commit gives the same verdict on every machine. Hypothesis is derandomized
# by tests/conftest.py. Fresh seeds are `make fuzz`'s.
PROPTEST_RNG_SEED ?= 20261121
export PROPTEST_RNG_SEED
SEEDS ?= 10

.PHONY: demo test fuzz develop clean validate-decomposed repro-claims repro-dcas repro-aalo repro-tafe repro-karuna repro-baraat repro-memcached

# The venv and its packages, redone when a requirements file changes.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed-run: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.installed-run

demo: $(VENV)/.installed-run
	$(BIN)/maturin develop --release
	# Every scheduler but baraat, whose per-RTT rounds take far longer on this
	# workload (docs/benchmarks.md); `coflowkit simulate` alone runs them all.
	$(BIN)/coflowkit simulate --out results/demo \
	    --scheduler fair,srpt,fifo,fifo-lm,scf,ncf,lcf,stf,varys,aalo,aalo-local,dcas,tafe,d2tcp

develop: $(VENV)/.installed-dev
	$(BIN)/maturin develop

test: develop
	# Types: mypy strict on the package ([tool.mypy] in pyproject.toml), then
	# the hand-written _core.pyi against the built binding.
	$(BIN)/python -m mypy
	$(BIN)/python -m mypy.stubtest coflowkit._core --mypy-config-file pyproject.toml \
	    --allowlist python/stubtest-allowlist.txt
	# Every crate's tests in one cargo run, the testbed's data plane (the
	# replay's native sender and receiver, crates/testbed) among them: one feature resolution,
	# the one `maturin develop` used, so the dependencies and the library crates
	# it built are reused, not built again (its Python surface is pytest's).
	cargo test --workspace
	# pytest in two passes: every test not marked `serial` on both cores
	# (pytest-xdist; a module that marks an `xdist_group` keeps to one worker),
	# then the `serial` ones alone (pyproject.toml's markers).
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup -m "not serial" tests/
	$(BIN)/python -m pytest -q -m serial tests/

# Fresh seeds for every randomized suite (tests/fuzz.py; release build).
fuzz: develop
	$(BIN)/python tests/fuzz.py --seeds $(SEEDS)

# The decomposed engine's validation grid (docs/decomposed-engine.md): release build, the packet
# engine's stores (resumed), the decomposed engine rerun, the page's generated section.
validate-decomposed: $(VENV)/.installed-run
	$(BIN)/maturin develop --release
	$(BIN)/python examples/decomposed/validate.py --page

# Every seed-paper claim in one table, read from the reproduction pages (no simulation).
repro-claims: $(VENV)/.installed-run
	$(BIN)/python examples/reproductions/claims.py

# Runs examples/reproductions/dcas*.toml into results/ (resuming),
# redraws docs/reproductions/dcas/ and rewrites docs/reproductions/dcas.md.
repro-dcas: $(VENV)/.installed-run
	$(BIN)/maturin develop --release
	$(BIN)/python examples/reproductions/dcas.py
	$(BIN)/python examples/reproductions/claims.py

repro-aalo: $(VENV)/.installed-run
	$(BIN)/maturin develop --release
	$(BIN)/python examples/reproductions/aalo/regenerate.py
	$(BIN)/python examples/reproductions/claims.py

# Baraat's section 5.2 scaled down (docs/reproductions/baraat.md): release build, every
# examples/reproductions/baraat/*.toml into results/ (resuming), the figures, the page.
repro-baraat: $(VENV)/.installed-run
	$(BIN)/maturin develop --release
	$(BIN)/python examples/reproductions/baraat/regenerate.py
	$(BIN)/python examples/reproductions/claims.py

# Baraat's Memcached experiment (5.1, Table 3; docs/reproductions/memcached.md): release build, then
# the testbed (root, iproute2, Debian's memcached) under each scheduler and plain TCP, and the same
# workload in the flow- and packet-level simulators, into results/memcached/results.json.
repro-memcached: $(VENV)/.installed-run
	$(BIN)/maturin develop --release
	$(BIN)/python examples/reproductions/memcached.py --out results/memcached

# TAFE's section V and Fig. 2 (docs/reproductions/tafe.md): release build, the experiments, the
# packet-level runs (examples/reproductions/tafe_packet.py), the page.
repro-tafe: $(VENV)/.installed-dev
	$(BIN)/maturin develop --release
	$(BIN)/python examples/reproductions/tafe.py
	$(BIN)/python examples/reproductions/claims.py

# Karuna's motivation, headline and starvation case (docs/reproductions/karuna.md):
# release build, both experiment files, the cases built in the script, the packet-level runs
# with PIAS against DCTCP (examples/reproductions/karuna/packet.py), the one-change runs that split
# the gaps (split.py), the page.
repro-karuna: $(VENV)/.installed-dev
	$(BIN)/maturin develop --release
	$(BIN)/python examples/reproductions/karuna/regenerate.py
	$(BIN)/python examples/reproductions/claims.py

clean:
	rm -rf $(VENV) results
