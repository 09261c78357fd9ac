# The two commands of the README: `make demo` and `make test` (and `make docs`, the reference site).
# Both create .venv and install everything the project needs, so a fresh clone needs nothing by hand.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint docs install system-deps clean

install: $(STAMP)

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[notebook,dev,docs]'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# Debian's Chromium for the browser test (never a browser download).
system-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "installing Debian's chromium for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

demo: $(STAMP)
	$(VENV)/bin/sendframe demo

# the reference site in site/ (open site/index.html from disk); tests/test_docs_site.py builds it the same way
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# ruff and mypy first: they answer in seconds, the suite in minutes
lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks conftest.py docs
	$(VENV)/bin/mypy src

test: $(STAMP) system-deps lint
	$(PY) -m pytest -n 2 --dist loadfile

clean:
	rm -rf $(VENV) build site src/*.egg-info .pytest_cache .ruff_cache .mypy_cache
