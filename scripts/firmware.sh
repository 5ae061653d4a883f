#!/usr/bin/env bash
# The 8-Ball as Cortex-M4 firmware (docs/FIRMWARE.md): the same BLEHost and
# EightBall sources as the Linux binary, in Embedded Swift, on the board layer of
# Firmware/board/mps2-an386 (QEMU).
#
#   scripts/firmware.sh setup
#       installs gcc-arm-none-eabi, binutils-arm-none-eabi, picolibc-arm-none-eabi
#       and qemu-system-arm (only what is missing)
#   scripts/firmware.sh build [--name N] [--address A] [--seed S] [--answers slug|text] [--rx-ring BYTES] [--rx-lazy-ms MS]
#       builds .build-firmware/<name>.elf (defaults: name 8-Ball, an address
#       derived from the name, seed 0x8BA11F00, a 2048-byte UART receive ring)
#       and checks the budgets: flash <= 64 KB, static RAM <= 24 KB, no stack
#       frame over 2 KB (Firmware/tools/budget.py; a failed budget fails the build)
#   scripts/firmware.sh run [--name N | --elf FILE] --h4 HOST:PORT [--log FILE] [--icount SHIFT]
#       runs it in qemu-system-arm -M mps2-an386: UART0 = H4 over TCP to an H4
#       server at HOST:PORT (a Bumble controller), UART1 = the log on this
#       terminal (or FILE). --icount paces the CPU at 2^SHIFT ns an instruction
#       (6: about 16 MIPS, a slow MCU). Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=.build-firmware
board=mps2-an386

# Budgets (docs/FIRMWARE.md); the stack's run-time peak is checked by Tests/Firmware.
FLASH_BUDGET=$((64 * 1024))
RAM_BUDGET=$((24 * 1024))
FRAME_BUDGET=$((2 * 1024))

usage() {
    sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit "${1:-2}"
}

die() { echo "firmware: $*" >&2; exit 2; }

# Runs a compiler step nicely; its messages go to $out/compile.log, shown when it fails.
quiet() {
    if ! nice "$@" >>"$out/compile.log" 2>&1; then
        echo "firmware: failed: $*" >&2
        tail -n 60 "$out/compile.log" >&2
        exit 1
    fi
}

setup() {
    local packages=(gcc-arm-none-eabi binutils-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm) missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if ((${#missing[@]})); then
        echo "firmware: installing Debian packages: ${missing[*]}"
        local sudo_cmd=()
        [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
        "${sudo_cmd[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

need_tools() {
    command -v swiftc >/dev/null || die "swiftc not found: Swift 6.3 is required (Embedded Swift)"
    command -v arm-none-eabi-gcc >/dev/null && [ -f /usr/lib/picolibc/arm-none-eabi/picolibc.specs ] ||
        die "the ARM toolchain is missing: run scripts/firmware.sh setup"
}

build() {
    local name="8-Ball" address="" seed="" answers="slug" rx_ring=2048 rx_lazy_ms=0
    while (($#)); do
        case $1 in
            --rx-ring) rx_ring=${2?--rx-ring needs a value}; shift 2 ;;
            --rx-lazy-ms) rx_lazy_ms=${2?--rx-lazy-ms needs a value}; shift 2 ;;
            --name) name=${2?--name needs a value}; shift 2 ;;
            --address) address=${2?--address needs a value}; shift 2 ;;
            --seed) seed=${2?--seed needs a value}; shift 2 ;;
            --answers) answers=${2?--answers needs a value}; shift 2 ;;
            *) die "unknown build option '$1' (see scripts/firmware.sh --help)" ;;
        esac
    done
    [[ $rx_ring =~ ^[0-9]+$ ]] && ((rx_ring >= 16 && (rx_ring & (rx_ring - 1)) == 0)) ||
        die "--rx-ring must be a power of two, at least 16 (got '$rx_ring')"
    [[ $rx_lazy_ms =~ ^[0-9]+$ ]] && ((rx_lazy_ms <= 1000)) ||
        die "--rx-lazy-ms must be a number of milliseconds from 0 to 1000 (got '$rx_lazy_ms')"
    need_tools
    mkdir -p "$out/gen"
    : >"$out/compile.log"
    local config_args=("$out/gen/FirmwareConfig.swift.new" --board "$board" --name "$name" --answers "$answers")
    [ -n "$address" ] && config_args+=(--address "$address")
    [ -n "$seed" ] && config_args+=(--seed "$seed")
    local stem
    stem=$(python3 Firmware/tools/config.py "${config_args[@]}") || exit 2
    local obj="$out/obj/$stem"
    rm -rf "$obj"
    mkdir -p "$obj"
    mv "$out/gen/FirmwareConfig.swift.new" "$obj/FirmwareConfig.swift"

    # The core unchanged (the same sources as the Linux binary), the main loop and
    # the board, linked: `make firmware` (the Makefile holds the flags and the stack size).
    echo "firmware: building BLEHost, EightBall, the main loop (Firmware/Main.swift) and the $board board (make firmware)"
    quiet make --no-print-directory firmware FIRMWARE_STEM="$stem" FIRMWARE_RX_RING="$rx_ring" FIRMWARE_RX_LAZY_MS="$rx_lazy_ms"
    local elf="$out/$stem.elf" driver_size stack_size
    driver_size=$(sed -n 's/^driver=//p' "$out/core/layout.txt")
    stack_size=$(make -s --no-print-directory print-FIRMWARE_STACK)
    echo "firmware: built $elf (name \"$name\", $(grep -o 'address: UInt64 = 0x[0-9A-F]*' "$obj/FirmwareConfig.swift" |
        sed 's/.*0x\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)/address \1:\2:\3:\4:\5:\6/'), seed $(sed -n 's/.*seed: UInt64 = //p' "$obj/FirmwareConfig.swift"))"
    echo "firmware: state: driver $driver_size B (host, 8-Ball, de-framer, outgoing packet); stack $stack_size B"
    python3 Firmware/tools/budget.py "$elf" --map "$out/$stem.map" --flash $FLASH_BUDGET --ram $RAM_BUDGET \
        --frame $FRAME_BUDGET --json "$out/$stem.budget.json"
}

run() {
    local name="8-Ball" elf="" h4="" log="" icount=()
    while (($#)); do
        case $1 in
            --icount) [[ ${2-} =~ ^[0-9]+$ ]] && (($2 <= 10)) || die "--icount needs a shift of 0 to 10"
                      icount=(-icount "shift=$2,sleep=on"); shift 2 ;;
            --name) name=${2?--name needs a value}; shift 2 ;;
            --elf) elf=${2?--elf needs a value}; shift 2 ;;
            --h4) h4=${2?--h4 needs HOST:PORT}; shift 2 ;;
            --log) log=${2?--log needs a file}; shift 2 ;;
            *) die "unknown run option '$1' (see scripts/firmware.sh --help)" ;;
        esac
    done
    [ -n "$h4" ] || die "run needs --h4 HOST:PORT (an H4 TCP server: a Bumble controller)"
    [[ $h4 =~ ^[^:]+:[0-9]+$ ]] || die "--h4 must be HOST:PORT (got '$h4')"
    if [ -z "$elf" ]; then
        local stem
        stem=$(python3 Firmware/tools/config.py /dev/null --board "$board" --name "$name") || exit 2
        elf="$out/$stem.elf"
    fi
    [ -f "$elf" ] || die "$elf not found: run scripts/firmware.sh build first"
    command -v qemu-system-arm >/dev/null || die "qemu-system-arm is missing: run scripts/firmware.sh setup"
    local serial1=(-serial stdio)
    [ -n "$log" ] && serial1=(-serial "file:$log")
    exec qemu-system-arm -M mps2-an386 -nographic -monitor none "${icount[@]}" -kernel "$elf" \
        -chardev "socket,id=h4,host=${h4%:*},port=${h4##*:},nodelay=on" -serial chardev:h4 "${serial1[@]}"
}

case ${1:-} in
    setup) setup ;;
    build) shift; build "$@" ;;
    run) shift; run "$@" ;;
    -h|--help|help) usage 0 ;;
    *) usage ;;
esac
