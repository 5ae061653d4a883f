/* Heap allocation counter for scripts/bench-usb.sh, loaded with LD_PRELOAD.
 *
 * Counts calls of malloc, calloc, realloc, posix_memalign, aligned_alloc,
 * memalign and valloc by the object file of the caller (the return address):
 *   [0] all, [1] libusb-1.0, [2] libc/libstdc++/libgcc/the loader (a library
 *   allocating for its own caller: strdup, operator new, …), [3] the rest (the
 *   program: our Swift code and the Swift runtime; Python, Bumble and their
 *   extension modules).
 * The counters live in a shared file mapping (ALLOC_COUNT_FILE.PID, 4 x
 * uint64), so they survive a process that is killed by a signal (Python on
 * SIGTERM); one file per process, as children inherit LD_PRELOAD (a
 * subprocess the program starts counts into its own file).
 * The allocations themselves are glibc's (__libc_malloc & co.).
 *
 * Build: cc -shared -fPIC -O2 -o alloc_count.so alloc_count.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static uint64_t *counters;
static __thread int inside;

__attribute__((constructor)) static void open_counters(void) {
    const char *base = getenv("ALLOC_COUNT_FILE");
    char path[4096];
    if (!base || snprintf(path, sizeof path, "%s.%d", base, (int)getpid()) >= (int)sizeof path) return;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    if (ftruncate(fd, 4 * sizeof(uint64_t)) == 0) {
        void *map = mmap(NULL, 4 * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map != MAP_FAILED) counters = map;
    }
    close(fd);
}

static int kind(void *caller) {
    Dl_info info;
    if (!dladdr(caller, &info) || !info.dli_fname) return 3;
    const char *name = strrchr(info.dli_fname, '/');
    name = name ? name + 1 : info.dli_fname;
    if (strncmp(name, "libusb-1.0", 10) == 0) return 1;
    if (strncmp(name, "libc.so", 7) == 0 || strncmp(name, "libstdc++", 9) == 0 || strncmp(name, "libgcc_s", 8) == 0
        || strncmp(name, "ld-linux", 8) == 0 || strncmp(name, "libm.so", 7) == 0)
        return 2;
    return 3;
}

static void count(void *caller) {
    if (!counters || inside) return;
    inside = 1;
    int k = kind(caller);
    __atomic_fetch_add(&counters[0], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&counters[k], 1, __ATOMIC_RELAXED);
    inside = 0;
}

void *malloc(size_t size) {
    count(__builtin_return_address(0));
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    count(__builtin_return_address(0));
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) {
    count(__builtin_return_address(0));
    return __libc_realloc(p, size);
}

void *memalign(size_t alignment, size_t size) {
    count(__builtin_return_address(0));
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count(__builtin_return_address(0));
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    count(__builtin_return_address(0));
    return __libc_memalign(sysconf(_SC_PAGESIZE), size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    count(__builtin_return_address(0));
    if (alignment % sizeof(void *) || (alignment & (alignment - 1))) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (!p && size) return ENOMEM;
    *out = p;
    return 0;
}
