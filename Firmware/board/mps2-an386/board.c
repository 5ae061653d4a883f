/* Board layer for QEMU's mps2-an386 (ARM MPS2 FPGA image AN386, Cortex-M4 at
 * 25 MHz): vector table, reset handler, 1 ms SysTick clock, the H4 UART (CMSDK
 * APB UART0, interrupt-fed receive ring with flow control), the debug log
 * (UART1), WFI idle, stack painting with an MPU guard, fault dumps, the static
 * homes of the Swift state, and the few symbols Embedded Swift objects need.
 * Implements Firmware/board/board.h. */
#include <stdint.h>
#include <stddef.h>

#include "board.h"

/* Sizes of the Swift state, measured by scripts/firmware.sh (MemoryLayout). */
#if !defined(FW_DRIVER_SIZE)
#error "build with scripts/firmware.sh: it passes -DFW_DRIVER_SIZE=... from the Swift layout"
#endif

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _sstack, _estack;
extern void (*__init_array_start[])(void), (*__init_array_end[])(void);
extern void fw_main(void); /* Swift: Firmware/Main.swift, @_cdecl("fw_main") */

#define REG(a) (*(volatile uint32_t *)(a))

/* CMSDK APB UART */
#define UART0 0x40004000u /* H4 to the controller */
#define UART1 0x40005000u /* debug log */
#define U_DATA 0x00
#define U_STATE 0x04     /* bit 0 TX full, bit 1 RX full */
#define U_CTRL 0x08      /* bit 0 TX enable, bit 1 RX enable, bit 3 RX interrupt enable */
#define U_INTSTATUS 0x0C /* bit 1 RX interrupt; write 1 to clear */
#define U_BAUDDIV 0x10
#define U_TXFULL 1u
#define U_RXFULL 2u
#define U_CTRL_TX 1u
#define U_CTRL_RX 2u
#define U_CTRL_RXINT 8u
#define UART0_RX_IRQ 0

/* Cortex-M4 system control space */
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define NVIC_ISER0 0xE000E100u
#define SCB_SHCSR 0xE000ED24u
#define SCB_CFSR 0xE000ED28u
#define SCB_HFSR 0xE000ED2Cu
#define SCB_MMFAR 0xE000ED34u
#define SCB_BFAR 0xE000ED38u
#define SCB_CPACR 0xE000ED88u
#define MPU_CTRL 0xE000ED94u
#define MPU_RNR 0xE000ED98u
#define MPU_RBAR 0xE000ED9Cu
#define MPU_RASR 0xE000EDA0u

#define SYSCLK_HZ 25000000u /* the FPGA clock QEMU models */
#define STACK_PAINT 0xC0DEC0DEu
/* The bottom of the stack is an MPU no-access region as large as the largest
 * frame the build allows (2 KB, Firmware/tools/budget.py): no function can step
 * over it, so an overflow always faults in it. */
#define STACK_GUARD 2048u
#define STACK_GUARD_SIZE_FIELD 10u /* MPU region size 2^(10+1) = 2048 B */

static inline uint32_t irq_save(void) {
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    return primask;
}
static inline void irq_restore(uint32_t primask) { __asm volatile("msr primask, %0" ::"r"(primask) : "memory"); }

/* ------------------------------------------------------------------ log (UART1) */

static void log_putc(uint8_t c) {
    while (REG(UART1 + U_STATE) & U_TXFULL) {}
    REG(UART1 + U_DATA) = c;
}

void board_log(const uint8_t *text, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\n') log_putc('\r');
        log_putc(text[i]);
    }
}

static void log_str(const char *s) {
    while (*s) {
        if (*s == '\n') log_putc('\r');
        log_putc((uint8_t)*s++);
    }
}

void board_log_dec64(uint64_t value) {
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    while (n) log_putc((uint8_t)digits[--n]);
}

void board_log_dec(uint32_t value) { board_log_dec64(value); }

void board_log_hex(uint32_t value, uint32_t count) {
    if (count == 0 || count > 8) count = 8;
    for (int shift = (int)(count - 1) * 4; shift >= 0; shift -= 4) log_putc((uint8_t)"0123456789abcdef"[(value >> shift) & 15]);
}

/* ------------------------------------------------------------------ time */

static volatile uint32_t ticks_lo, ticks_hi;
static volatile uint32_t sleeping, ticks_asleep, ticks_total;

void SysTick_Handler(void) {
    if (++ticks_lo == 0) ticks_hi++;
    ticks_total++;
    if (sleeping) ticks_asleep++;
}

uint64_t board_millis(void) {
    uint32_t p = irq_save();
    uint64_t ms = ((uint64_t)ticks_hi << 32) | ticks_lo;
    irq_restore(p);
    return ms;
}

uint32_t board_idle_permille(void) {
    uint32_t total = ticks_total;
    return total ? (uint32_t)((uint64_t)ticks_asleep * 1000u / total) : 0;
}

/* ------------------------------------------------------------------ H4 UART0 */

/* Receive ring: the interrupt writes at head, the main loop reads at tail (free-
 * running counters, power-of-two size). When it is full the RX interrupt is
 * masked and the byte stays in the UART: QEMU then reads nothing more from the
 * TCP socket, so the controller side is held back instead of losing bytes (on
 * a real part: RTS deasserted by the UART's hardware flow control). */
#ifndef FW_RX_RING
#define FW_RX_RING 2048u /* scripts/firmware.sh build --rx-ring N */
#endif
#define RX_RING ((uint32_t)(FW_RX_RING))
_Static_assert((RX_RING & (RX_RING - 1)) == 0 && RX_RING >= 16, "the receive ring is a power of two, at least 16");
static uint8_t rx_ring[RX_RING];
static volatile uint32_t rx_head, rx_tail;
static volatile uint32_t rx_held; /* RX interrupt masked: the ring was full */
static volatile uint32_t rx_bytes, tx_bytes, rx_stalls;
static volatile uint32_t rx_last_tick; /* SysTick of the last byte received */

/* A slow main loop on demand, for the flow-control test (scripts/firmware.sh build
 * --rx-lazy-ms N): the loop leaves received bytes in the ring until the interrupt has
 * had to hold the UART back, or until the line has been quiet for N ms. Any burst
 * longer than the ring then overruns it for certain, whatever the emulator's pace;
 * 0 (the default) drains at once. */
#ifndef FW_RX_LAZY_MS
#define FW_RX_LAZY_MS 0u
#endif

static int rx_drainable(void) {
    if (rx_head == rx_tail) return 0;
#if FW_RX_LAZY_MS > 0
    if (!rx_held) return ticks_lo - rx_last_tick >= FW_RX_LAZY_MS;
#endif
    return 1;
}

void UART0RX_Handler(void) {
    REG(UART0 + U_INTSTATUS) = U_RXFULL;
    while (REG(UART0 + U_STATE) & U_RXFULL) {
        uint32_t head = rx_head;
        if (head - rx_tail == RX_RING) {
            REG(UART0 + U_CTRL) &= ~U_CTRL_RXINT;
            rx_held = 1;
            rx_stalls++;
            return;
        }
        rx_ring[head % RX_RING] = (uint8_t)REG(UART0 + U_DATA);
        rx_head = head + 1;
        rx_bytes++;
        rx_last_tick = ticks_lo;
    }
}

size_t board_h4_peek(const uint8_t **bytes) {
    uint32_t tail = rx_tail;
    uint32_t waiting = rx_drainable() ? rx_head - tail : 0;
    uint32_t index = tail % RX_RING;
    uint32_t contiguous = RX_RING - index;
    *bytes = &rx_ring[index];
    return waiting < contiguous ? waiting : contiguous;
}

void board_h4_consume(size_t n) {
    rx_tail += (uint32_t)n;
    if (!rx_held) return;
    uint32_t p = irq_save();
    /* Interrupt on first, then take the held byte: the next one the UART accepts
     * raises the interrupt again (QEMU's UART signals only on arrival). */
    rx_held = 0;
    REG(UART0 + U_CTRL) |= U_CTRL_RXINT;
    if ((REG(UART0 + U_STATE) & U_RXFULL) && rx_head - rx_tail < RX_RING) {
        rx_ring[rx_head % RX_RING] = (uint8_t)REG(UART0 + U_DATA);
        rx_head++;
        rx_bytes++;
    }
    irq_restore(p);
}

void board_h4_write(const uint8_t *bytes, size_t n) {
    for (size_t i = 0; i < n; i++) {
        while (REG(UART0 + U_STATE) & U_TXFULL) {}
        REG(UART0 + U_DATA) = bytes[i];
    }
    tx_bytes += (uint32_t)n;
}

uint32_t board_rx_bytes(void) { return rx_bytes; }
uint32_t board_tx_bytes(void) { return tx_bytes; }
uint32_t board_rx_stalls(void) { return rx_stalls; }

/* ------------------------------------------------------------------ idle */

void board_idle(void) {
    uint32_t p = irq_save();
    /* With interrupts masked, WFI still wakes on a pending one: no lost wake-up
     * between the check and the sleep. */
    if (!rx_drainable() && !rx_held) {
        sleeping = 1; /* the interrupt that wakes us runs at irq_restore and counts a tick asleep */
        __asm volatile("dsb\n wfi\n isb" ::: "memory");
    }
    irq_restore(p);
    sleeping = 0;
}

/* ------------------------------------------------------------------ Swift state homes */

#define ALIGN8 __attribute__((aligned(8)))
static uint8_t driver_storage[FW_DRIVER_SIZE] ALIGN8;

static void fatal(const char *what) {
    log_str("\nFATAL: ");
    log_str(what);
    log_str("\n");
    for (;;) __asm volatile("wfi");
}

static void *storage(uint8_t *home, size_t capacity, size_t size, size_t alignment, const char *what) {
    if (size > capacity || alignment > 8) fatal(what);
    return home;
}

void *board_driver_storage(size_t size, size_t alignment) {
    return storage(driver_storage, sizeof driver_storage, size, alignment, "driver storage is smaller than MemoryLayout<HostDriver>");
}

/* ------------------------------------------------------------------ stack */

/* The stack sits at the bottom of RAM (link.ld), below .data/.bss: an overflow
 * hits the MPU guard (a MemManage fault, reported) instead of the state. */
static uint32_t boot_peak;

static uint32_t *stack_floor(void) { return (uint32_t *)((uintptr_t)&_sstack + STACK_GUARD); }

uint32_t board_stack_size(void) { return (uint32_t)((uintptr_t)&_estack - (uintptr_t)stack_floor()); }

uint32_t board_stack_peak(void) {
    uint32_t *w = stack_floor();
    while (w < &_estack && *w == STACK_PAINT) w++;
    return (uint32_t)((uintptr_t)&_estack - (uintptr_t)w);
}

int board_stack_intact(void) { return *stack_floor() == STACK_PAINT; }

uint32_t board_stack_mark(void) {
    boot_peak = board_stack_peak();
    uint32_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t *w = stack_floor(); (uintptr_t)w < sp - 64; w++) *w = STACK_PAINT;
    return boot_peak;
}

/* ------------------------------------------------------------------ faults */

__attribute__((used, noinline, noreturn)) void fault_report(uint32_t *frame, uint32_t exc_return) {
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    uint32_t cfsr = REG(SCB_CFSR);
    static const char *const names[] = {"?", "?", "NMI", "HardFault", "MemManage", "BusFault", "UsageFault"};
    log_str("\nFAULT ");
    log_str((ipsr & 0x1FF) < 7 ? names[ipsr & 0x1FF] : "interrupt");
    log_str(" cfsr=0x");
    board_log_hex(cfsr, 8);
    log_str(" hfsr=0x");
    board_log_hex(REG(SCB_HFSR), 8);
    if (cfsr & 0x80) {
        uint32_t address = REG(SCB_MMFAR);
        log_str(" mmfar=0x");
        board_log_hex(address, 8);
        if (address >= (uint32_t)(uintptr_t)&_sstack && address < (uint32_t)(uintptr_t)stack_floor())
            log_str("\nFAULT stack overflow: the MPU guard at the bottom of the stack was hit");
    }
    if (cfsr & 0x8000) { log_str(" bfar=0x"); board_log_hex(REG(SCB_BFAR), 8); }
    /* MSTKERR/STKERR: the exception frame could not be stacked (stack overflow). */
    if (cfsr & 0x1010) {
        log_str("\nFAULT stack overflow: the exception frame could not be stacked");
    } else {
        log_str("\nFAULT pc=0x");
        board_log_hex(frame[6], 8);
        log_str(" lr=0x");
        board_log_hex(frame[5], 8);
        log_str(" sp=0x");
        board_log_hex((uint32_t)(uintptr_t)frame, 8);
        if (cfsr & 0x10000) log_str(" (undefined instruction: a Swift runtime trap, e.g. a failed precondition)");
    }
    (void)exc_return;
    log_str("\nFAULT stack peak ");
    board_log_dec(board_stack_peak());
    log_str(" of ");
    board_log_dec(board_stack_size());
    log_str(" B\n");
    for (;;) __asm volatile("wfi");
}

/* Faults run on a stack of their own: the main one may be what overflowed. */
static uint32_t fault_stack[128] ALIGN8;
uint32_t *const fault_stack_top = &fault_stack[128];

__attribute__((naked)) void Fault_Handler(void) {
    __asm volatile(
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
        "mov r1, lr\n"
        "ldr r2, =fault_stack_top\n"
        "ldr r2, [r2]\n"
        "mov sp, r2\n"
        "b fault_report\n");
}

void Default_Handler(void) {
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    log_str("\nFATAL: unexpected exception ");
    board_log_dec(ipsr & 0x1FF);
    log_str("\n");
    for (;;) __asm volatile("wfi");
}

/* ------------------------------------------------------------------ what Swift objects reference */

/* Stack protector (on by default in Swift): a fixed guard is enough to catch
 * overruns; there is no attacker-controlled memory disclosure on this board. */
uintptr_t __stack_chk_guard = 0x5AF3C0DEu;
void __stack_chk_fail(void) { fatal("stack smashing detected (__stack_chk_fail)"); }

/* ------------------------------------------------------------------ reset */

void Reset_Handler(void) {
    uint32_t *src = &_sidata, *dst = &_sdata;
    while (dst < &_edata) *dst++ = *src++;
    for (dst = &_sbss; dst < &_ebss;) *dst++ = 0;
    /* Paint the stack below this frame: board_stack_peak measures what is used. */
    uint32_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    for (dst = &_sstack; (uintptr_t)dst < sp - 64; dst++) *dst = STACK_PAINT;

    REG(SCB_CPACR) |= 0xFu << 20; /* FPU on, should any code use it */
    /* MPU region 0: the stack guard, no access; the default map elsewhere. */
    REG(MPU_RNR) = 0;
    REG(MPU_RBAR) = (uint32_t)(uintptr_t)&_sstack;
    REG(MPU_RASR) = (1u << 28) | (0u << 24) | (STACK_GUARD_SIZE_FIELD << 1) | 1u; /* XN, no access, on */
    REG(MPU_CTRL) = (1u << 2) | 1u;                            /* PRIVDEFENA, ENABLE */
    REG(SCB_SHCSR) |= (1u << 16) | (1u << 17) | (1u << 18);    /* MemManage, BusFault, UsageFault */
    __asm volatile("dsb\n isb" ::: "memory");

    REG(UART1 + U_BAUDDIV) = 16;
    REG(UART1 + U_CTRL) = U_CTRL_TX;
    REG(UART0 + U_BAUDDIV) = 16;
    REG(UART0 + U_CTRL) = U_CTRL_TX | U_CTRL_RX | U_CTRL_RXINT;
    REG(NVIC_ISER0) = 1u << UART0_RX_IRQ;
    REG(SYST_RVR) = SYSCLK_HZ / 1000 - 1;
    REG(SYST_CVR) = 0;
    REG(SYST_CSR) = 7; /* processor clock, interrupt, enable */

    for (void (**f)(void) = __init_array_start; f < __init_array_end; f++) (*f)();
    fw_main();
    fatal("fw_main returned");
}

typedef void (*vector_t)(void);
__attribute__((section(".isr_vector"), used)) const vector_t vectors[16 + 32] = {
    (vector_t)(uintptr_t)&_estack,
    Reset_Handler,
    Default_Handler, /* NMI */
    Fault_Handler,   /* HardFault */
    Fault_Handler,   /* MemManage */
    Fault_Handler,   /* BusFault */
    Fault_Handler,   /* UsageFault */
    0, 0, 0, 0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,
    Default_Handler, /* PendSV */
    SysTick_Handler,
    [16 + UART0_RX_IRQ] = UART0RX_Handler,
    [16 + 1 ... 16 + 31] = Default_Handler,
};
