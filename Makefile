# Thin wrapper: set-up, build, test, demo. The real build is CMake (CMakeLists.txt).
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=
# LibTorch's OpenMP threads spin while waiting unless told otherwise; on a shared 2-core machine
# that makes multi-threaded steps up to 20x slower. It is read when the library loads.
export OMP_WAIT_POLICY ?= PASSIVE

.PHONY: all setup configure build test demo sanitize fuzz clean format

all: build

# `make demo` installs only the packages the demo needs (scripts/setup.sh demo). A build folder it
# configured without the rest is marked, and configured again here once they are installed, so
# that a later `make test` builds and runs the Python package's and the libFuzzer tests too.
DEMO_MARK = $(BUILD)/.configured-without-test-packages

setup:
	@bash scripts/setup.sh
	@if [ -f $(DEMO_MARK) ]; then cmake -S . -B $(BUILD) && rm -f $(DEMO_MARK); fi

# Ninja: a new source file leaves the other objects alone (the Makefile generator rewrites the
# target's flags.make, which lists every source's precompiled-header flags, and so recompiles the
# whole target). A build folder configured earlier keeps its generator.
GENERATOR ?= Ninja

CONFIGURE = cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

$(BUILD)/CMakeCache.txt:
	$(CONFIGURE)

configure: setup $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The main job (builds the blr tool and the Python package): every Table-1 row checked, the multimodal mixture demo, then (when the LibTorch
# layer is built) IVON vs AdamW vs SGD on Fashion-MNIST (scripts/demo.sh).
demo:
	@bash scripts/setup.sh demo
	@if [ ! -f $(BUILD)/CMakeCache.txt ]; then \
	  $(CONFIGURE) && { bash scripts/setup.sh all --check || touch $(DEMO_MARK); }; fi
	@targets=blr; if cmake --build $(BUILD) --target help | grep -qw blr_python; then targets="blr blr_python"; fi; \
	  echo "cmake --build $(BUILD) --target $$targets -j $(JOBS)"; cmake --build $(BUILD) --target $$targets -j $(JOBS)
	$(BUILD)/blr table1
	$(BUILD)/blr multimodal
	@if $(BUILD)/blr compare --help >/dev/null 2>&1 && [ -f scripts/demo.sh ]; then \
	  bash scripts/demo.sh $(BUILD)/blr; \
	else echo "(LibTorch layer not built: skipping the Fashion-MNIST comparison)"; fi
	@if [ -d $(BUILD)/python/blr ]; then echo "Python: PYTHONPATH=$(BUILD)/python python3 -c 'import blr' (docs/python.md; pip --isolated install --no-index --no-deps --no-build-isolation . installs it)"; fi

# AddressSanitizer + UndefinedBehaviorSanitizer build of the whole suite (torch layer excluded:
# Debian's LibTorch is not built with ASan).
sanitize: setup
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DBLR_SANITIZE=ON -DBLR_WITH_TORCH=OFF -DBLR_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

# libFuzzer + ASan + UBSan runs of every fuzz harness (clang), FUZZ_SECONDS each (fuzz/run.sh);
# found inputs stay in build-fuzz/corpus, crashes in build-fuzz/artifacts.
FUZZ_SECONDS ?= 60
fuzz: setup
	bash fuzz/run.sh $(FUZZ_SECONDS) build-fuzz

format:
	find include src apps tests bench -name '*.hpp' -o -name '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-fuzz
