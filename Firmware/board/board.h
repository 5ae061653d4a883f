/* The board interface: everything Firmware/Main.swift needs from the hardware.
 *
 * A port to another part (docs/FIRMWARE.md, porting) implements exactly these
 * functions plus its start-up (vectors, reset, .data/.bss) and linker script;
 * the Swift side and the core do not change. Firmware/board/mps2-an386/board.c
 * is the reference implementation (QEMU mps2-an386, Cortex-M4).
 *
 * Swift declares these with @_extern(c) (Main.swift); keep both in step. */
#ifndef ITCB_BOARD_H
#define ITCB_BOARD_H

#include <stddef.h>
#include <stdint.h>

/* ---- time ---- */
/* Milliseconds since reset (a 1 ms tick; 64 bits, never wraps). */
uint64_t board_millis(void);

/* ---- H4 UART to the HCI controller ---- */
/* Received bytes not yet consumed: sets *bytes to the oldest and returns how many
 * follow it contiguously (0 when none). They stay valid until board_h4_consume. */
size_t board_h4_peek(const uint8_t **bytes);
/* Releases the first n bytes peeked. When the receive ring was full the UART was
 * held back (flow control); this lets it run again. */
void board_h4_consume(size_t n);
/* Sends bytes to the controller (returns when they are all handed to the UART). */
void board_h4_write(const uint8_t *bytes, size_t n);

/* ---- power ---- */
/* Sleeps until the next interrupt (received byte or tick) unless input is waiting. */
void board_idle(void);

/* ---- debug log (UART1 on mps2-an386) ---- */
void board_log(const uint8_t *text, size_t n);
void board_log_dec(uint32_t value);
void board_log_dec64(uint64_t value);
void board_log_hex(uint32_t value, uint32_t digits);

/* ---- static homes of the Swift state (.bss), sized by the build ---- */
/* The driver: host, 8-Ball, de-framer and outgoing packet in one. */
void *board_driver_storage(size_t size, size_t alignment);

/* ---- stack (painted at reset) ---- */
/* Bytes of stack ever used since reset or the last board_stack_mark. */
uint32_t board_stack_peak(void);
uint32_t board_stack_size(void);
/* Records the boot peak and repaints the unused stack: later peaks are the main loop's. */
uint32_t board_stack_mark(void);
/* True while the bottom of the stack still holds the paint (no overflow). */
int board_stack_intact(void);

/* ---- counters for status lines ---- */
uint32_t board_rx_bytes(void);
uint32_t board_tx_bytes(void);
uint32_t board_rx_stalls(void);
/* Per mille of ticks that found the CPU asleep in WFI since reset. */
uint32_t board_idle_permille(void);

#endif
