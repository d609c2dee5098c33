# Convenience front end over Meson (in the spirit of PipeWire's).
#   make test   install missing packages (and a headless Chromium for the
#               live view's browser test), configure, build, run every suite
#   make demo   install, build, run the demo
#   make experiment  build, run the force-control example against rtde-sim, plot it
#   make deb    the Debian packages into $(BUILD)/deb, checked by lintian
#   make        configure and build
# Variables: BUILD (build directory), MESON_OPTS (extra meson setup flags),
# SUITES (meson test --suite filters, default: all); for make demo: ROBOT=<host>
# (a real controller instead of rtde-sim, read-only) and ARM=1 (let it move);
# PEERS (the directory of the pinned ur_rtde and URCL archives for the peers
# suite, docs/peers.md; default: shared/peers next to the checkout, if there).

BUILD ?= build
MESON_OPTS ?=
SUITES ?=
PEERS ?= $(wildcard $(abspath $(or $(shell git rev-parse --show-toplevel 2>/dev/null),.)/../shared/peers))

.PHONY: all deps deps-deb configure build test demo demo-rig experiment deb install clean format format-check

all: build

# The Debian packages in .ci/packages that are missing, installed with
# apt-get (as root; otherwise named, with the command that installs them).
# Idempotent and quiet when everything is present.
deps:
	@$(MAKE) -s install-packages LIST=.ci/packages

# The packaging tools (.ci/packages-deb) besides: make deb.
deps-deb: deps
	@$(MAKE) -s install-packages LIST=.ci/packages-deb

# The missing packages of the list $(LIST).
.PHONY: install-packages
install-packages:
	@missing=$$(for p in $$(grep -v '^\#' $(LIST)); do \
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

# The peers suite's libraries are built first (tests/peers/fetch.sh, once
# per archive; a few minutes on 2 cores). Its status is left for the tests:
# without archives or a network they skip and say why, and a failed peer
# build fails them, so this step never stops the other suites.
test: build
	@$(MAKE) -s install-packages LIST=.ci/packages-browser
	@sh .ci/start-services
	@if [ -z "$(SUITES)" ] || echo " $(SUITES) " | grep -q ' peers'; then \
		sh tests/peers/fetch.sh $(BUILD)/peers $(PEERS) || true; fi
	meson test -C $(BUILD) --print-errorlogs $(foreach s,$(SUITES),--suite $(s))

demo: build
	@sh apps/demo.sh $(BUILD)

# Several devices in one loop (docs/rig.md): two simulated arms in one step
# (B follows A), then an arm and a simulated Net F/T sensor at 7 kHz (an
# admittance loop on the sensor), plotted into $(BUILD)/demo-rig/rtloop-rig.png.
demo-rig: build
	@sh apps/demo-rig.sh $(BUILD)

# The force-control experiment (apps/examples/experiment.c, docs/experiment.md)
# against an rtde-sim started here on loopback (a contact plane 28 mm below
# the start pose, a hand pushing 5 N along x one second into teach mode): the
# phase table, then $(BUILD)/experiment/rtloop-experiment.png from its CSV.
EXP_OUT = $(BUILD)/experiment
EXP_SIM = --port 0 --contact-z 0.46 --force-noise 0.2 --push-x 5 --push-after 1 --push-for 1 --duration 120

experiment: build
	@set -eu; out=$(EXP_OUT); mkdir -p $$out; \
	rm -f $$out/experiment.csv $$out/experiment.json $$out/rtloop-experiment.png; \
	$(BUILD)/apps/rtde-sim/rtde-sim $(EXP_SIM) --json $$out/sim.json >$$out/sim.txt 2>$$out/sim.log & \
	sim=$$!; trap 'kill $$sim 2>/dev/null || true; wait $$sim 2>/dev/null || true' EXIT; \
	port=; i=0; while [ -z "$$port" ] && [ $$i -lt 100 ] && kill -0 $$sim 2>/dev/null; do \
		port=$$(sed -n 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' $$out/sim.log); \
		[ -n "$$port" ] || sleep 0.05; i=$$((i + 1)); done; \
	[ -n "$$port" ] || { cat $$out/sim.log >&2; echo "experiment: rtde-sim did not start" >&2; exit 1; }; \
	echo "== rtde-sim on 127.0.0.1:$$port: rtde-sim $(EXP_SIM)"; \
	status=0; $(BUILD)/apps/examples/rtloop-example-experiment --port $$port \
		--csv $$out/experiment.csv --json $$out/experiment.json || status=$$?; \
	if command -v gnuplot >/dev/null 2>&1 && [ -s $$out/experiment.csv ]; then \
		printf '%s\n' 'set terminal pngcairo size 1200,1000 font "Sans,11" noenhanced' \
		"set output \"$$out/rtloop-experiment.png\"" 'set datafile separator ","' \
		'set multiplot layout 3,1 title "rtloop experiment: move_j, contact, press 10 N + slide, retract, teach"' \
		'set grid' 'set key top left box opaque' 'set xlabel "time [s]"' 'set autoscale xfix' \
		'set ylabel "TCP x [mm]"' 'set y2label "TCP z [mm]"' 'set ytics nomirror' 'set y2tics' \
		"plot \"$$out/experiment.csv\" using 1:(\$$3*1000) every ::1 with lines lw 2 title \"x\", \"\" using 1:(\$$5*1000) every ::1 axes x1y2 with lines lw 2 title \"z\"" \
		'unset y2label' 'unset y2tics' 'set ytics mirror' 'set ylabel "force [N]"' \
		"plot \"$$out/experiment.csv\" using 1:(-\$$8) every ::1 with lines lw 1 title \"-F_z (pressing)\", \"\" using 1:(-\$$6) every ::1 with lines lw 1 title \"-F_x (the push)\", 10 with lines dt 2 lw 2 title \"target 10 N\"" \
		'unset key' 'set ylabel "phase"' 'set yrange [-0.5:6.5]' \
		'set ytics ("start" 0, "contact" 1, "press" 2, "end_force" 3, "retract" 4, "teach" 5, "end_teach" 6)' \
		"plot \"$$out/experiment.csv\" using 1:2 every ::1 with steps lw 2" 'unset multiplot' \
		| gnuplot && echo "== plot: $$out/rtloop-experiment.png"; \
	else echo "experiment: no plot (needs gnuplot and a CSV)" >&2; fi; \
	exit $$status

# The Debian packages (debian/, docs/install.md): built by dpkg-buildpackage
# from a copy of the tracked files, checked by lintian, left in $(BUILD)/deb
# (not installed: apt-get install ./$(BUILD)/deb/*.deb does that).
deb: deps-deb
	@sh .ci/check-deb.sh --build-only . $(BUILD)/deb

install: build
	meson install -C $(BUILD)

format:
	git ls-files '*.c' '*.h' '*.cpp' | xargs clang-format -i

format-check:
	git ls-files '*.c' '*.h' '*.cpp' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD)
