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
board_dir=Firmware/board/$board

# Budgets (docs/FIRMWARE.md); the stack's run-time peak is checked by Tests/Firmware.
FLASH_BUDGET=$((64 * 1024))
RAM_BUDGET=$((24 * 1024))
FRAME_BUDGET=$((2 * 1024))
STACK_SIZE=$((16 * 1024))

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
    # Fresh outputs every time: swiftc can keep a stale .o when only its flags change.
    rm -rf "$out/core" "$out/gen"
    mkdir -p "$out/core" "$out/gen"
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

    # Embedded Swift for a Cortex-M4 without FPU use; one-link capacities (ITCB_FIRMWARE).
    # -arm-load-store-opt=false: Swift 6.3's ARM load/store optimiser merges loads
    # through `self` (r10, swiftself) into `ldm r10!` with writeback in a callee
    # that does not save r10, while the caller expects r10 intact (it faulted in
    # ByteReader.has). budget.py checks the ELF for any function that does this.
    local sflags=(-Xllvm -arm-load-store-opt=false -enable-experimental-feature Embedded -enable-experimental-feature AddressableParameters
                  -enable-experimental-feature Extern -wmo -parse-as-library -target armv7em-none-none-eabi
                  -Osize -no-allocations -D ITCB_FIRMWARE -Xcc -mfloat-abi=soft -Xcc -fno-pic
                  -Xfrontend -function-sections)
    local cflags=(-mcpu=cortex-m4 -mthumb -mfloat-abi=soft -Os -g -ffunction-sections -fdata-sections
                  -Wall -Wextra -Werror -std=c11 -IFirmware/board)

    # The core, unchanged: the same sources as the Linux binary.
    echo "firmware: compiling BLEHost and EightBall (Embedded Swift, -D ITCB_FIRMWARE)"
    quiet swiftc "${sflags[@]}" -module-name BLEHost -emit-module -emit-module-path "$out/core/BLEHost.swiftmodule" \
        -c Sources/BLEHost/*.swift -o "$out/core/BLEHost.o"
    quiet swiftc "${sflags[@]}" -module-name EightBall -I "$out/core" -emit-module \
        -emit-module-path "$out/core/EightBall.swiftmodule" -c Sources/EightBall/*.swift -o "$out/core/EightBall.o"

    # The sizes of the state's static homes, from Swift's own layouts.
    local layout
    layout=$(nice swiftc "${sflags[@]}" -module-name FirmwareLayout -I "$out/core" -emit-ir Firmware/tools/Layout.swift -o - |
        awk 'match($0, /@fw_layout_[a-z]+\(/) { name = substr($0, RSTART + 11, RLENGTH - 12) }
             name != "" && $1 == "ret" { print name "=" $3; name = "" }')
    local driver_size
    driver_size=$(sed -n 's/^driver=//p' <<<"$layout")
    [ -n "$driver_size" ] || die "could not read the state's layout from Firmware/tools/Layout.swift (got: $layout)"

    echo "firmware: compiling the main loop (Firmware/Main.swift) and the $board board"
    quiet swiftc "${sflags[@]}" -module-name Firmware -I "$out/core" -c Firmware/Main.swift "$obj/FirmwareConfig.swift" \
        -o "$obj/Firmware.o"
    quiet arm-none-eabi-gcc "${cflags[@]}" -DFW_DRIVER_SIZE="$driver_size" -DFW_RX_RING="$rx_ring" -DFW_RX_LAZY_MS="${rx_lazy_ms}u" -c "$board_dir/board.c" -o "$obj/board.o"

    local elf="$out/$stem.elf"
    quiet arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=soft -nostartfiles --specs=picolibc.specs \
        -T "$board_dir/link.ld" -Wl,--defsym=STACK_SIZE=$STACK_SIZE -Wl,--gc-sections -Wl,--no-warn-rwx-segments -Wl,--no-enum-size-warning \
        -Wl,-Map="$out/$stem.map" "$obj/board.o" "$obj/Firmware.o" "$out/core/EightBall.o" "$out/core/BLEHost.o" \
        -lc -lgcc -o "$elf"
    echo "firmware: built $elf (name \"$name\", $(grep -o 'address: UInt64 = 0x[0-9A-F]*' "$obj/FirmwareConfig.swift" |
        sed 's/.*0x\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)/address \1:\2:\3:\4:\5:\6/'), seed $(sed -n 's/.*seed: UInt64 = //p' "$obj/FirmwareConfig.swift"))"
    echo "firmware: state: driver $driver_size B (host, 8-Ball, de-framer, outgoing packet); stack $STACK_SIZE B"
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
