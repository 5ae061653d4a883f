# The one build description of itcb-dongle (docs/ARCHITECTURE.md, "Builds"):
# every build is a target here, with its compiler flags written once. The
# scripts README names (scripts/build-embedded.sh, embedded-check.sh,
# stack-check.sh, firmware.sh, fuzz.sh, bench.sh, install.sh, build-deb.sh)
# call these targets and add what is not a build: running, measuring, checking
# budgets, packaging. SwiftPM (Package.swift) builds the debug binary and the
# unit tests.
#
#   make                       the shipped binary: .build-embedded/itcb-dongle
#                              (Embedded Swift, x86_64), its man page and completion
#   make shipped ARCH=arm64    the same for Debian arm64 (.build-embedded-arm64)
#   make no-allocations        the core as Embedded Swift for a Cortex-M4, -no-allocations
#   make stack-frames          the same, with LLVM's stack-size remarks (scripts/stack-check.sh)
#   make firmware FIRMWARE_STEM=S   the MCU firmware (scripts/firmware.sh build writes the
#                              configuration .build-firmware/obj/S/FirmwareConfig.swift first)
#   make fuzzer                the libFuzzer targets with AddressSanitizer (scripts/fuzz.sh)
#   make core-bench            the core alone, -O (scripts/bench.sh)
#   make docs                  man page and completion, by itcb-dongle-docs (build time
#                              only; make docs-tool: .build/docs-tool/itcb-dongle-docs)
#   make install DESTDIR= PREFIX=/usr/local   what scripts/install.sh and the .deb install
#
# Nothing is rebuilt when no source, and not this file, changed (make -B rebuilds).

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := shipped
.DELETE_ON_ERROR:

SWIFTC ?= swiftc
TOOLCHAIN := $(patsubst %/bin/,%,$(dir $(realpath $(shell command -v $(SWIFTC)))))
CLANG := $(or $(wildcard $(TOOLCHAIN)/bin/clang),clang)
VERSION := $(shell tr -d ' \n' < VERSION)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)

sources = $(wildcard Sources/$(1)/*.swift Sources/$(1)/*/*.swift)

# --- Flags, each set once ------------------------------------------------------

# Every build of the core: borrowed reads of the InlineArray-backed state stay in place.
FEATURES := -enable-experimental-feature AddressableParameters -enable-experimental-feature RawLayout
EMBEDDED := -enable-experimental-feature Embedded $(FEATURES) -wmo -parse-as-library
# The core for a Cortex-M4: the -no-allocations proof, the stack check and the firmware.
MCU_FLAGS := $(EMBEDDED) -target armv7em-none-none-eabi -Osize -no-allocations
# The firmware adds its board's needs. -arm-load-store-opt=false: Swift 6.3's ARM
# load/store optimiser merges loads through `self` (r10, swiftself) into `ldm r10!`
# with writeback in a callee that does not save r10, while the caller expects r10
# intact (it faulted in ByteReader.has); Firmware/tools/budget.py checks every ELF.
FIRMWARE_SWIFTFLAGS := -Xllvm -arm-load-store-opt=false $(MCU_FLAGS) -enable-experimental-feature Extern \
    -D ITCB_FIRMWARE -Xcc -mfloat-abi=soft -Xcc -fno-pic -Xfrontend -function-sections
FIRMWARE_CFLAGS := -mcpu=cortex-m4 -mthumb -mfloat-abi=soft -Os -g -ffunction-sections -fdata-sections \
    -Wall -Wextra -Werror -std=c11 -IFirmware/board
FIRMWARE_STACK := 16384
# The stack check: the MCU build, with the prologue/epilogue inserter's frame sizes saved.
STACK_FLAGS = $(MCU_FLAGS) -save-optimization-record=yaml -save-optimization-record-passes prologepilog \
    -save-optimization-record-path $(STACK_OUT)/$(MODULE).opt.yaml
# The fuzzers: debug code with AddressSanitizer.
# -enable-testing: a target reads the transmit queue's fill (@testable import BLEHost).
FUZZ_FLAGS := -sanitize=fuzzer,address -parse-as-library -Onone -wmo -enable-testing $(FEATURES)
# The core bench: the core as an ordinary optimised Swift build.
BENCH_FLAGS := -O -wmo -parse-as-library $(FEATURES)
# The build-time tool (runs on this machine, never shipped).
TOOL_FLAGS := -O -wmo -parse-as-library
DOCS_TOOL_FLAGS := $(TOOL_FLAGS) $(FEATURES)

# The shipped binary, per ARCH (x86_64, or arm64 cross-built: the toolchain has no
# Embedded stdlib for aarch64-unknown-linux-gnu, so Swift compiles for
# aarch64-none-none-elf while its C importer reads Debian's arm64 headers, the
# same AAPCS64 data layout, and clang links against Debian's arm64 glibc and libusb).
ARCH ?= x86_64
ifneq ($(filter $(ARCH),arm64 aarch64),)
  TARGET := aarch64-unknown-linux-gnu
  STDLIB_TARGET := aarch64-none-none-elf
  CROSS := -Xcc --target=$(TARGET)
  RUN := qemu-aarch64-static
  STRIP := aarch64-linux-gnu-strip
  OUT ?= .build-embedded-arm64
  # Segments aligned for 16 KB pages (the Pi 5's kernel; Debian's and the Pi
  # 3/4's use 4 KB), not the linker's 64 KB default, whose padding puts up to
  # 64 KB of zeros in the file each time the code grows past a boundary.
  ARCH_LDFLAGS := -Wl,-z,max-page-size=16384
  # No -fno-plt: a call through the GOT is three instructions here (adrp, ldr, blr),
  # 2.7 KB more than the PLT's stubs (2026-11-29).
  ARCH_SWIFTFLAGS :=
else ifneq ($(filter $(ARCH),x86_64 amd64),)
  TARGET := x86_64-unknown-linux-gnu
  STDLIB_TARGET := $(TARGET)
  CROSS :=
  RUN :=
  STRIP := strip
  OUT ?= .build-embedded
  ARCH_LDFLAGS :=
  # C functions called through the GOT, not the PLT: with -z now every slot is bound
  # at start anyway, so the PLT's stubs (16 B each, and their .got.plt) are pure
  # overhead; a call grows by one byte (1,136 B less, 2026-11-29).
  ARCH_SWIFTFLAGS := -Xcc -fno-plt
else
  $(error ARCH must be x86_64 or arm64, not $(ARCH))
endif
# -Osize, a section per function (the link keeps what is called), the machine
# outliner (folds String code's repeated runs); as the SwiftPM release build, no
# run-time exclusivity checks. The objects are LLVM bitcode (-lto=llvm-full): the
# link optimises the five modules and the stdlib as one (LTO below).
# -mergeable-traps: a function's failed checks (overflow, bounds) share one trap
# instruction instead of one each (1,441 -> 325; 4.7 KB less, measured
# 2026-11-29). Every check still stops the program; a core dump's address then
# names the function, not the check.
SHIPPED_FLAGS := $(EMBEDDED) -target $(STDLIB_TARGET) $(CROSS) -Osize -lto=llvm-full -Xfrontend -function-sections \
    -Xllvm -enable-machine-outliner=always -enforce-exclusivity=unchecked -Xfrontend -mergeable-traps $(ARCH_SWIFTFLAGS)
# The LLVM half of SHIPPED_FLAGS, for the frontend's pass over a module's edited IR.
SHIPPED_IR_FLAGS := -target $(STDLIB_TARGET) $(CROSS) -enable-experimental-feature Embedded -Osize -lto=llvm-full \
    -function-sections -mergeable-traps
LITERALS_ALIGNED := SHIPPED_FLAGS PLATFORM_FLAGS
# The platform layer inlines less than -Osize's default: its code is mostly strings
# (log lines, messages, --help), which Swift otherwise inlines at every use.
PLATFORM_FLAGS := $(SHIPPED_FLAGS) -I Sources/CLinux -I Sources/CLibUSB \
    -Xfrontend -sil-inline-threshold -Xfrontend 10 \
    -Xfrontend -sil-inline-caller-benefit-reduction-factor -Xfrontend 64
# The toolchain's lld, for identical code folding (512 B less with LTO since the
# loop is built once for every role, RoleDispatch; it was 7 KB with three copies).
# Not the Embedded stdlib's libswiftUnicodeDataTables: the platform compares text
# as bytes (Sources/ITCBOptions/ByteText.swift), so a link that fails on an
# undefined _swift_stdlib_* symbol means a String ==, <, hasPrefix, split, switch
# or Character count crept in (docs/ARCHITECTURE.md, "Text is bytes").
# Full LTO across the modules (what one module's code never calls of another's
# goes, and the outliner sees the whole program): 36 KB less on x86_64; relative
# relocations packed (DT_RELR, glibc 2.36: Debian 12 and later): 7 KB less
# (measured 2026-11-28, docs/PERFORMANCE.md). -O2: lld merges a string literal
# that ends another into it (288 B less, 2026-11-29).
SHIPPED_LDFLAGS := -flto=full -Wl,-mllvm,-enable-machine-outliner=always -lusb-1.0 -fuse-ld=lld -Wl,--icf=all -Wl,-O2 \
    -Wl,--gc-sections -Wl,-z,relro -Wl,-z,now -Wl,-z,pack-relative-relocs -Wl,--build-id $(ARCH_LDFLAGS)

# --- One Swift module ------------------------------------------------------------

# $(call module,DIR,NAME,SOURCES,FLAGS VARIABLE,MODULES IT IMPORTS,OTHER INPUTS)
# DIR/NAME.o and DIR/NAME.swiftmodule, whole-module. The object is removed first:
# swiftc may leave a stale one in place when it fails.
define module
$(1)/$(2).o $(1)/$(2).swiftmodule &: $(3) $(foreach m,$(5),$(1)/$(m).swiftmodule) $(6) Makefile $(if $(filter $(4),$(LITERALS_ALIGNED)),scripts/literal-align.awk)
	@mkdir -p $(1)
	@rm -f $(1)/$(2).o
	@echo "make: swiftc $(2) ($(4)) → $(1)" >&2
	$(if $(filter $(4),$(LITERALS_ALIGNED)),$(call literals_aligned,$(1)/$(2),$(call swiftc_module,$(1),$(2),$(3),$(4))),$(call swiftc_module,$(1),$(2),$(3),$(4)) -c -o $(1)/$(2).o)
$(1)/$(2).o $(1)/$(2).swiftmodule: MODULE := $(2)
endef

# $(call swiftc_module,DIR,NAME,SOURCES,FLAGS VARIABLE): swiftc for the module and
# its .swiftmodule, less the object's output.
swiftc_module = $$(SWIFTC) $$($(4)) -module-name $(2) -I $(1) $(3) -emit-module -emit-module-path $(1)/$(2).swiftmodule

# $(call literals_aligned,DIR/NAME,SWIFTC COMMAND): the shipped modules' objects, with
# their string literals byte-aligned (scripts/literal-align.awk says why). swiftc emits
# the module's IR before LLVM's passes; the frontend then runs Swift's LLVM pipeline
# on the edited IR as -c does. Without the edit: the same binary on x86_64, 160 B
# more on arm64 (the IR comes after Swift's coroutine split, so a few accessors are
# optimised a little differently; measured 2026-11-29).
define literals_aligned
$(2) -emit-ir -Xfrontend -disable-llvm-optzns -o $(1).ll
	awk -f scripts/literal-align.awk $(1).ll $(1).ll > $(1).aligned.ll || { rm -f $(1).aligned.ll; exit 1; }
	$$(SWIFTC) -frontend -emit-bc $(1).aligned.ll $$(SHIPPED_IR_FLAGS) -o $(1).o
	@rm -f $(1).ll $(1).aligned.ll
endef

# $(call core,DIR,FLAGS VARIABLE,MODULES): BLEHost and those of EightBall, Chipsets built over it.
define core
$(call module,$(1),BLEHost,$(call sources,BLEHost),$(2))
$(if $(filter EightBall,$(3)),$(call module,$(1),EightBall,$(call sources,EightBall),$(2),BLEHost))
$(if $(filter Chipsets,$(3)),$(call module,$(1),Chipsets,$(call sources,Chipsets),$(2),BLEHost))
endef

.PHONY: FORCE shipped shipped-arm64 no-allocations stack-frames firmware fuzzer core-bench docs docs-tool install print-%

# --- The shipped binary and its documentation --------------------------------------

$(eval $(call core,$(OUT)/obj,SHIPPED_FLAGS,EightBall Chipsets))
# The option table is strings too: the platform's flags (with -Osize's inlining it was 49 KB larger).
$(eval $(call module,$(OUT)/obj,ITCBOptions,$(call sources,ITCBOptions),PLATFORM_FLAGS,BLEHost Chipsets))
$(eval $(call module,$(OUT)/obj,ITCBDongle,$(call sources,ITCBDongle),PLATFORM_FLAGS,BLEHost EightBall Chipsets ITCBOptions,$(wildcard Sources/CLinux/* Sources/CLibUSB/*)))
SHIPPED_OBJECTS := $(patsubst %,$(OUT)/obj/%.o,ITCBDongle ITCBOptions BLEHost EightBall Chipsets)

$(OUT)/itcb-dongle: $(SHIPPED_OBJECTS)
	$(CLANG) -target $(TARGET) -o $@ $^ $(SHIPPED_LDFLAGS)
	$(RUN) $@ --version > /dev/null

shipped: $(OUT)/itcb-dongle docs
shipped-arm64:
	$(MAKE) shipped ARCH=arm64

# itcb-dongle-docs: the option table (ITCBOptions, over the chipset table that names the
# firmware folders) built for this machine, and the generator.
DOCS_TOOL := .build/docs-tool/itcb-dongle-docs
$(eval $(call core,.build/docs-tool,DOCS_TOOL_FLAGS,Chipsets))
$(eval $(call module,.build/docs-tool,ITCBOptions,$(call sources,ITCBOptions),DOCS_TOOL_FLAGS,BLEHost Chipsets))
$(DOCS_TOOL): Sources/ITCBDongleDocs/main.swift $(patsubst %,.build/docs-tool/%.o,ITCBOptions Chipsets BLEHost)
	$(SWIFTC) -O -module-name ITCBDongleDocs -I .build/docs-tool $^ -o $@

docs-tool: $(DOCS_TOOL)
DOCS := $(OUT)/itcb-dongle.1 $(patsubst %,$(OUT)/completion/%,itcb-dongle.bash _itcb-dongle itcb-dongle.fish)
docs: $(DOCS)
# Written every time (a few ms): its date is SOURCE_DATE_EPOCH's, which make cannot see change.
$(OUT)/itcb-dongle.1: $(DOCS_TOOL) VERSION FORCE
	@mkdir -p $(@D)
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(DOCS_TOOL) man-page $(VERSION) > $@
$(OUT)/completion/itcb-dongle.bash: SHELL_NAME := bash
$(OUT)/completion/_itcb-dongle: SHELL_NAME := zsh
$(OUT)/completion/itcb-dongle.fish: SHELL_NAME := fish
$(OUT)/completion/%: $(DOCS_TOOL)
	@mkdir -p $(@D)
	$(DOCS_TOOL) completion $(SHELL_NAME) > $@

# --- Install: the one file list of scripts/install.sh and scripts/build-deb.sh -------

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DOCDIR ?= $(PREFIX)/share/doc/itcb-dongle
# The Grafana dashboard and Prometheus alert rules (monitoring/; docs/DEPLOYMENT.md, "Metrics").
DATADIR ?= $(PREFIX)/share/itcb-dongle
MANDIR ?= $(PREFIX)/share/man/man1
SBINDIR ?= $(PREFIX)/sbin
MAN8DIR ?= $(PREFIX)/share/man/man8
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/site-functions
FISH_COMPLETION_DIR ?= $(PREFIX)/share/fish/vendor_completions.d
UDEV_RULES_DIR ?= /etc/udev/rules.d
SYSTEMD_UNIT_DIR ?= /etc/systemd/system
SYSCONFDIR ?= /etc
BINARY ?= $(OUT)/itcb-dongle

# The rule and the unit name /usr/bin/itcb-dongle: rewritten to BINDIR. Settings
# (SYSCONFDIR/default/itcb-dongle, SYSCONFDIR/itcb-dongle/dongles) are never
# overwritten: a different shipped one goes next to it as .dist, as dpkg does.
install: $(BINARY) docs
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MAN8DIR) $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(MANDIR) $(DESTDIR)$(BASH_COMPLETION_DIR) \
	    $(DESTDIR)$(ZSH_COMPLETION_DIR) $(DESTDIR)$(FISH_COMPLETION_DIR) $(DESTDIR)$(UDEV_RULES_DIR) $(DESTDIR)$(SYSTEMD_UNIT_DIR) \
	    $(DESTDIR)$(SYSCONFDIR)/default $(DESTDIR)$(SYSCONFDIR)/itcb-dongle
	install -m 0755 $(BINARY) $(DESTDIR)$(BINDIR)/itcb-dongle
	$(STRIP) --strip-unneeded --remove-section=.comment --remove-section=.note $(DESTDIR)$(BINDIR)/itcb-dongle
	install -m 0644 $(OUT)/itcb-dongle.1 $(DESTDIR)$(MANDIR)/itcb-dongle.1
	# The Pi's radio handed over (README, "A Raspberry Pi without a dongle"); its
	# manual page is its header comment, the text --help prints.
	sed 's|/usr/bin/itcb-dongle|$(BINDIR)/itcb-dongle|g' packaging/itcb-dongle-setup > $(DESTDIR)$(SBINDIR)/itcb-dongle-setup
	chmod 0755 $(DESTDIR)$(SBINDIR)/itcb-dongle-setup
	{ printf '.TH ITCB-DONGLE-SETUP 8 "%s" "itcb-dongle $(VERSION)"\n.SH NAME\nitcb-dongle-setup \\- %s\n.SH DESCRIPTION\n.nf\n' \
	    "$$(date -u -d @$(SOURCE_DATE_EPOCH) +%F)" "hand a Raspberry Pi's own Bluetooth radio over to itcb-dongle"; \
	  sed -n '4,/^set -eu/p' packaging/itcb-dongle-setup | sed '$$d; s/^# \{0,1\}//; s/\\/\\e/g; s/^[.'"'"']/\\\&&/'; \
	  printf '.fi\n.SH SEE ALSO\nitcb\\-dongle(1)\n'; } > $(DESTDIR)$(MAN8DIR)/itcb-dongle-setup.8
	chmod 0644 $(DESTDIR)$(MAN8DIR)/itcb-dongle-setup.8
	# bash-completion sources the file: no #! line (lintian's bash-completion-with-hashbang)
	sed '1{/^#!/d}' $(OUT)/completion/itcb-dongle.bash > $(DESTDIR)$(BASH_COMPLETION_DIR)/itcb-dongle
	install -m 0644 $(OUT)/completion/_itcb-dongle $(DESTDIR)$(ZSH_COMPLETION_DIR)/_itcb-dongle
	install -m 0644 $(OUT)/completion/itcb-dongle.fish $(DESTDIR)$(FISH_COMPLETION_DIR)/itcb-dongle.fish
	sed 's|/usr/bin/itcb-dongle|$(BINDIR)/itcb-dongle|g' udev/70-itcb-dongle.rules \
	    > $(DESTDIR)$(UDEV_RULES_DIR)/70-itcb-dongle.rules
	sed -e 's|/usr/bin/itcb-dongle|$(BINDIR)/itcb-dongle|g' -e 's|/usr/share/doc/itcb-dongle|$(DOCDIR)|g' \
	    udev/itcb-dongle@.service > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/itcb-dongle@.service
	chmod 0644 $(DESTDIR)$(BASH_COMPLETION_DIR)/itcb-dongle $(DESTDIR)$(UDEV_RULES_DIR)/70-itcb-dongle.rules \
	    $(DESTDIR)$(SYSTEMD_UNIT_DIR)/itcb-dongle@.service
	# README and the docs it links to, in the same layout (its links work there too).
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 docs/*.md $(DESTDIR)$(DOCDIR)/docs/
	install -d $(DESTDIR)$(DATADIR)/grafana $(DESTDIR)$(DATADIR)/prometheus
	install -m 0644 monitoring/itcb-dongle-dashboard.json $(DESTDIR)$(DATADIR)/grafana/itcb-dongle-dashboard.json
	install -m 0644 monitoring/itcb-dongle-rules.yml monitoring/itcb-dongle-rules.test.yml $(DESTDIR)$(DATADIR)/prometheus/
	for pair in udev/itcb-dongle.default:default/itcb-dongle udev/dongles:itcb-dongle/dongles; do \
	    src=$${pair%%:*} dst=$(DESTDIR)$(SYSCONFDIR)/$${pair#*:}; \
	    if [ ! -e "$$dst" ]; then install -m 0644 "$$src" "$$dst"; \
	    elif ! cmp -s "$$src" "$$dst"; then install -m 0644 "$$src" "$$dst.dist"; \
	        echo "install: kept $$dst; the shipped one is $$dst.dist"; fi; \
	done

# --- The core for a Cortex-M4: -no-allocations, stack frames ------------------------

EMBEDDED_OUT ?= .build/embedded
$(eval $(call core,$(EMBEDDED_OUT),MCU_FLAGS,EightBall Chipsets))
no-allocations: $(patsubst %,$(EMBEDDED_OUT)/%.o,BLEHost EightBall Chipsets)

STACK_OUT ?= .build/stack
$(eval $(call core,$(STACK_OUT),STACK_FLAGS,EightBall Chipsets))
stack-frames: $(patsubst %,$(STACK_OUT)/%.o,BLEHost EightBall Chipsets)

# --- The MCU firmware (docs/FIRMWARE.md): the same core on the mps2-an386 board ------

FIRMWARE_OUT := .build-firmware
BOARD_DIR := Firmware/board/mps2-an386
FIRMWARE_RX_RING ?= 2048
FIRMWARE_RX_LAZY_MS ?= 0
FIRMWARE_OBJ = $(FIRMWARE_OUT)/obj/$(FIRMWARE_STEM)
$(eval $(call core,$(FIRMWARE_OUT)/core,FIRMWARE_SWIFTFLAGS,EightBall))
# The sizes of the state's static homes, from Swift's own layouts (Firmware/tools/Layout.swift).
$(FIRMWARE_OUT)/core/layout.txt: Firmware/tools/Layout.swift $(FIRMWARE_OUT)/core/EightBall.swiftmodule
	$(SWIFTC) $(FIRMWARE_SWIFTFLAGS) -module-name FirmwareLayout -I $(FIRMWARE_OUT)/core -emit-ir $< -o - \
	    | awk 'match($$0, /@fw_layout_[a-z]+\(/) { name = substr($$0, RSTART + 11, RLENGTH - 12) } \
	           name != "" && $$1 == "ret" { print name "=" $$3; name = "" }' > $@
	grep -q '^driver=[0-9]' $@ || { echo "make: no driver size in $@" >&2; exit 1; }

firmware: $(FIRMWARE_OUT)/core/BLEHost.o $(FIRMWARE_OUT)/core/EightBall.o $(FIRMWARE_OUT)/core/layout.txt
	[ -n "$(FIRMWARE_STEM)" ] && [ -f $(FIRMWARE_OBJ)/FirmwareConfig.swift ] \
	    || { echo "make: firmware needs FIRMWARE_STEM=S and $(FIRMWARE_OBJ)/FirmwareConfig.swift (scripts/firmware.sh build)" >&2; exit 2; }
	$(SWIFTC) $(FIRMWARE_SWIFTFLAGS) -module-name Firmware -I $(FIRMWARE_OUT)/core -c Firmware/Main.swift \
	    $(FIRMWARE_OBJ)/FirmwareConfig.swift -o $(FIRMWARE_OBJ)/Firmware.o
	arm-none-eabi-gcc $(FIRMWARE_CFLAGS) -DFW_DRIVER_SIZE=$$(sed -n 's/^driver=//p' $(FIRMWARE_OUT)/core/layout.txt) \
	    -DFW_RX_RING=$(FIRMWARE_RX_RING) -DFW_RX_LAZY_MS=$(FIRMWARE_RX_LAZY_MS)u -c $(BOARD_DIR)/board.c -o $(FIRMWARE_OBJ)/board.o
	arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=soft -nostartfiles --specs=picolibc.specs \
	    -T $(BOARD_DIR)/link.ld -Wl,--defsym=STACK_SIZE=$(FIRMWARE_STACK) -Wl,--gc-sections \
	    -Wl,--no-warn-rwx-segments -Wl,--no-enum-size-warning -Wl,-Map=$(FIRMWARE_OUT)/$(FIRMWARE_STEM).map \
	    $(FIRMWARE_OBJ)/board.o $(FIRMWARE_OBJ)/Firmware.o $(FIRMWARE_OUT)/core/EightBall.o \
	    $(FIRMWARE_OUT)/core/BLEHost.o -lc -lgcc -o $(FIRMWARE_OUT)/$(FIRMWARE_STEM).elf

# --- The fuzzers and the core bench ----------------------------------------------------

$(eval $(call core,.build/fuzz,FUZZ_FLAGS,EightBall Chipsets))
fuzzer: .build/fuzz/fuzz-core
.build/fuzz/fuzz-core: Fuzz/FuzzTargets.swift $(patsubst %,.build/fuzz/%.o,BLEHost EightBall Chipsets)
	$(SWIFTC) $(FUZZ_FLAGS) -I .build/fuzz $^ -o $@

$(eval $(call core,.build/bench,BENCH_FLAGS,EightBall))
core-bench: .build/bench/core-bench
.build/bench/core-bench: Bench/CoreBench.swift .build/bench/BLEHost.o .build/bench/EightBall.o
	$(SWIFTC) $(BENCH_FLAGS) -I .build/bench $^ -o $@

# make print-FIRMWARE_STACK: a variable's value (for the scripts' reports).
print-%:
	@echo '$($*)'
