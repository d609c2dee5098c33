# Convenience front end over Meson (in the spirit of PipeWire's).
#   make test   install missing packages, configure, build, run every suite
#   make demo   install, build, run the demo
#   make        configure and build
# Variables: BUILD (build directory), MESON_OPTS (extra meson setup flags),
# SUITES (meson test --suite filters, default: all); for make demo: ROBOT=<host>
# (a real controller instead of rtde-sim, read-only) and ARM=1 (let it move).

BUILD ?= build
MESON_OPTS ?=
SUITES ?=

.PHONY: all deps configure build test demo install clean format format-check

all: build

# The Debian packages in .ci/packages that are missing, installed with
# apt-get (as root; otherwise named, with the command that installs them).
# Idempotent and quiet when everything is present.
PACKAGES := $(shell grep -v '^\#' .ci/packages)

deps:
	@missing=$$(for p in $(PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done | tr '\n' ' '); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "rtloop: missing Debian packages: $$missing" >&2; \
			echo "rtloop: fix: sudo apt-get install $$missing (or sudo make deps)" >&2; \
			exit 1; \
		fi; \
		echo "rtloop: installing: $$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	fi

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

configure: deps $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD)

test: build
	@sh .ci/start-services
	meson test -C $(BUILD) --print-errorlogs $(foreach s,$(SUITES),--suite $(s))

demo: build
	@sh apps/demo.sh $(BUILD)

install: build
	meson install -C $(BUILD)

format:
	git ls-files '*.c' '*.h' '*.cpp' | xargs clang-format -i

format-check:
	git ls-files '*.c' '*.h' '*.cpp' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD)
