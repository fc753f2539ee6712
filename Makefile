# Two commands do all set-up on a fresh Linux machine with Python 3.11:
#   make demo   - create .venv, install (CPU torch), build and link the bundled demo project
#   make test   - same install (with the `cluster` extra, Ray, so the Ray tests run), run the test suite
# `make demo` also opens the desktop app on the demo project when a display is available.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# CPU build of torch by default; `make TORCH_CONSTRAINTS=constraints-gpu.txt ...` for the CUDA build.
TORCH_CONSTRAINTS ?= constraints-cpu.txt
STAMP := $(VENV)/.installed-$(notdir $(TORCH_CONSTRAINTS))
export OMP_WAIT_POLICY := PASSIVE
export HF_HUB_OFFLINE := 1

.PHONY: install demo demo-headless test lint bench package clean

install: $(STAMP)

$(STAMP): pyproject.toml $(TORCH_CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c $(TORCH_CONSTRAINTS) -e '.[dev,cluster]'
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(BIN)/curalink demo
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then $(BIN)/curalink; \
	else echo "No display here: open the desk later with $(BIN)/curalink"; fi

# Installs only the `package` extra (PyInstaller) into the venv: `-e '.[package]'` would reinstall Curalink.
package: $(STAMP)
	$(BIN)/pip install --quiet -c $(TORCH_CONSTRAINTS) 'curalink[package]'
	$(BIN)/pyinstaller --noconfirm --distpath dist --workpath build/pyinstaller packaging/curalink.spec

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check core app bench tests

bench: $(STAMP)
	$(BIN)/curalink bench import

clean:
	rm -rf $(VENV) build dist .pytest_cache
