/* A fake gpiochip for the tests, as an LD_PRELOAD shim over ioctl(2): no GPIO
 * simulator is available here (this machine's kernel has no modules; the USB
 * guest's Debian 6.1 kernel is built without CONFIG_GPIO_SIM and
 * CONFIG_GPIO_MOCKUP). The program opens its chips in $ITCB_GPIOCHIP_DIR
 * (regular files named gpiochipN, made by the test); every ioctl of the GPIO
 * character device's type (0xB4) on a file named gpiochip* is answered here
 * from $FAKE_GPIO_CHIPS, and appended to $FAKE_GPIO_LOG as one line:
 *
 *   <CLOCK_MONOTONIC seconds> CHIPINFO <chip>
 *   <t> LINEINFO <chip> <offset>
 *   <t> REQUEST <chip> <offset> <flags hex> <output value or -> <consumer>
 *   <t> SET <chip> <offset> <value>
 *   <t> REFUSED <what>               (a request the kernel would refuse too)
 *
 * $FAKE_GPIO_CHIPS: "gpiochip0=NAME,NAME,...;gpiochip1=..." (a line's index is
 * its offset); NAME@CONSUMER is a line some consumer holds (requesting it
 * fails with EBUSY, as the kernel's gpiolib does). Other ioctls go to libc.
 * Build: cc -shared -fPIC -o fake_gpiochip.so fake_gpiochip.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct held { int fd; char chip[64]; unsigned offset; };
static struct held held[16];

static void note(const char *format, ...) {
    const char *path = getenv("FAKE_GPIO_LOG");
    if (!path) return;
    FILE *log = fopen(path, "a");
    if (!log) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    fprintf(log, "%ld.%09ld ", (long)now.tv_sec, now.tv_nsec);
    va_list args;
    va_start(args, format);
    vfprintf(log, format, args);
    va_end(args);
    fputc('\n', log);
    fclose(log);
}

/* The chip's name ("gpiochip1") when fd is one of the fake chips. */
static int chip_of(int fd, char *name, size_t size) {
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = 0;
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    if (strncmp(base, "gpiochip", 8) != 0) return 0;
    snprintf(name, size, "%s", base);
    return 1;
}

/* The chip's line list in $FAKE_GPIO_CHIPS (up to ';' or the end), or NULL. */
static const char *lines_of(const char *chip, size_t *length) {
    const char *all = getenv("FAKE_GPIO_CHIPS");
    size_t chip_length = strlen(chip);
    for (const char *at = all; at && *at;) {
        const char *end = strchr(at, ';');
        if (!end) end = at + strlen(at);
        if ((size_t)(end - at) > chip_length && strncmp(at, chip, chip_length) == 0 && at[chip_length] == '=') {
            *length = (size_t)(end - at) - chip_length - 1;
            return at + chip_length + 1;
        }
        at = *end ? end + 1 : end;
    }
    return NULL;
}

/* Line `offset`'s name and consumer; the number of lines when offset is -1. */
static int line(const char *chip, int offset, char *name, char *consumer) {
    size_t length;
    const char *list = lines_of(chip, &length);
    if (!list) return -1;
    int index = 0;
    const char *at = list, *stop = list + length;
    while (at <= stop) {
        const char *comma = memchr(at, ',', (size_t)(stop - at));
        const char *end = comma ? comma : stop;
        if (index == offset) {
            const char *sign = memchr(at, '@', (size_t)(end - at));
            const char *name_end = sign ? sign : end;
            snprintf(name, GPIO_MAX_NAME_SIZE, "%.*s", (int)(name_end - at), at);
            snprintf(consumer, GPIO_MAX_NAME_SIZE, "%.*s", sign ? (int)(end - sign - 1) : 0, sign ? sign + 1 : "");
            return 0;
        }
        index++;
        if (!comma) break;
        at = comma + 1;
    }
    return offset < 0 ? index : -1;
}

int ioctl(int fd, unsigned long request, ...) {
    va_list args;
    va_start(args, request);
    void *argument = va_arg(args, void *);
    va_end(args);
    static int (*real)(int, unsigned long, ...);
    if (!real) real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
    if (_IOC_TYPE(request) != 0xB4) return real(fd, request, argument);

    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        if (held[i].fd != fd || fd <= 0 || request != GPIO_V2_LINE_SET_VALUES_IOCTL) continue;
        struct gpio_v2_line_values *values = argument;
        if (values->mask != 1) { note("REFUSED SET mask %llx", (unsigned long long)values->mask); errno = EINVAL; return -1; }
        note("SET %s %u %d", held[i].chip, held[i].offset, (int)(values->bits & 1));
        return 0;
    }
    char chip[64], name[GPIO_MAX_NAME_SIZE], consumer[GPIO_MAX_NAME_SIZE];
    if (!chip_of(fd, chip, sizeof chip)) return real(fd, request, argument);
    int lines = line(chip, -1, name, consumer);
    if (lines < 0) { errno = ENOTTY; return -1; }
    switch (request) {
    case GPIO_GET_CHIPINFO_IOCTL: {
        struct gpiochip_info *info = argument;
        memset(info, 0, sizeof *info);
        snprintf(info->name, sizeof info->name, "%s", chip);
        snprintf(info->label, sizeof info->label, "fake");
        info->lines = (unsigned)lines;
        note("CHIPINFO %s", chip);
        return 0;
    }
    case GPIO_V2_GET_LINEINFO_IOCTL: {
        struct gpio_v2_line_info *info = argument;
        unsigned offset = info->offset;
        if (line(chip, (int)offset, name, consumer) != 0) { errno = EINVAL; return -1; }
        memset(info, 0, sizeof *info);
        info->offset = offset;
        memcpy(info->name, name, sizeof info->name);
        memcpy(info->consumer, consumer, sizeof info->consumer);
        info->flags = GPIO_V2_LINE_FLAG_INPUT | (consumer[0] ? GPIO_V2_LINE_FLAG_USED : 0);
        note("LINEINFO %s %u", chip, offset);
        return 0;
    }
    case GPIO_V2_GET_LINE_IOCTL: {
        struct gpio_v2_line_request *line_request = argument;
        unsigned offset = line_request->offsets[0];
        if (line_request->num_lines != 1 || line(chip, (int)offset, name, consumer) != 0) {
            note("REFUSED REQUEST %s lines %u", chip, line_request->num_lines);
            errno = EINVAL;
            return -1;
        }
        if (consumer[0]) { note("REFUSED REQUEST %s %u held by %s", chip, offset, consumer); errno = EBUSY; return -1; }
        int value = -1;
        for (unsigned i = 0; i < line_request->config.num_attrs; i++) {
            if (line_request->config.attrs[i].attr.id == GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES
                && (line_request->config.attrs[i].mask & 1)) {
                value = (int)(line_request->config.attrs[i].attr.values & 1);
            }
        }
        int line_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
            if (held[i].fd > 0) continue;
            held[i].fd = line_fd;
            snprintf(held[i].chip, sizeof held[i].chip, "%s", chip);
            held[i].offset = offset;
            break;
        }
        line_request->fd = line_fd;
        if (value < 0) note("REQUEST %s %u %llx - %s", chip, offset, (unsigned long long)line_request->config.flags, line_request->consumer);
        else note("REQUEST %s %u %llx %d %s", chip, offset, (unsigned long long)line_request->config.flags, value, line_request->consumer);
        return 0;
    }
    default:
        note("REFUSED ioctl %lx on %s", request, chip);
        errno = EINVAL;
        return -1;
    }
}
