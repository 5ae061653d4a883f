// The libc the Linux board uses, as one small C module that both builds import:
// the ordinary SwiftPM build (where these headers come through the system
// module map) and the Embedded Swift build (which has no Glibc module). What
// Swift cannot import as it is gets a non-variadic shim here: errno (a macro),
// open(2) and fcntl(2) (variadic), SIG_IGN (a cast macro), sigaction's
// handler (in a union), a directory entry's name, the
// GPIO character device's ioctls (their structs hold arrays Swift imports as tuples).
#ifndef ITCB_CLINUX_H
#define ITCB_CLINUX_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gpio.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wctype.h>

static inline int clinux_errno(void) { return errno; }
static inline void clinux_set_errno(int value) { errno = value; }

static inline int clinux_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }
static inline int clinux_fcntl(int fd, int command, int argument) { return fcntl(fd, command, argument); }

static inline ssize_t clinux_read(int fd, void *buffer, size_t count) { return read(fd, buffer, count); }
/* `value` as printf's "%.*e" (the digits of Double's text: Output/NumberText.swift). */
static inline int clinux_format_exponential(char *buffer, size_t size, int precision, double value) {
    return snprintf(buffer, size, "%.*e", precision, value);
}
static inline ssize_t clinux_write(int fd, const void *buffer, size_t count) { return write(fd, buffer, count); }
static inline int clinux_close(int fd) { return close(fd); }

/// signal(number, SIG_IGN).
static inline void clinux_ignore_signal(int number) { signal(number, SIG_IGN); }

/// Whether `fd` is the stream systemd connected to the journal: JOURNAL_STREAM
/// is its "DEVICE:INODE" (systemd.exec(5)); a child that inherited the variable
/// but writes elsewhere (a terminal, a pipe) does not match.
/// Read digit by digit: sscanf(3) would bring stdio's scanning code into the
/// resident set of every service start.
static inline int clinux_is_journal_stream(int fd) {
    const char *p = getenv("JOURNAL_STREAM");
    unsigned long long device = 0, inode = 0;
    struct stat status;
    if (!p || *p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') device = device * 10 + (unsigned)(*p++ - '0');
    if (*p++ != ':' || *p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') inode = inode * 10 + (unsigned)(*p++ - '0');
    if (*p != 0 || fstat(fd, &status) != 0) return 0;
    return status.st_dev == device && status.st_ino == inode;
}

/// `host` as a numeric IPv4 or IPv6 address with `port`: one addrinfo, as
/// getaddrinfo(3) gives it (kept here until the next call; not to be freed),
/// found by inet_pton(3) alone, without the resolver's code. NULL for a name.
static inline struct addrinfo *clinux_numeric_address(const char *host, unsigned short port) {
    static struct sockaddr_storage address;
    static struct addrinfo info;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
    memset(&address, 0, sizeof address);
    memset(&info, 0, sizeof info);
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        info.ai_addrlen = sizeof *v4;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        info.ai_addrlen = sizeof *v6;
    } else {
        return NULL;
    }
    info.ai_family = address.ss_family;
    info.ai_socktype = SOCK_STREAM;
    info.ai_addr = (struct sockaddr *)&address;
    return &info;
}

/// sigaction(2) with `handler` and no SA_RESTART: a call blocked when the
/// signal comes (connect, open of a FIFO) returns EINTR instead of going on
/// and holding off the stop. (sa_handler is a member of a union Swift names badly.)
static inline int clinux_catch_signal(int number, void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    return sigaction(number, &action, NULL);
}

/// Unicode case folding of one scalar without Swift's Unicode tables: libc's,
/// under the C.UTF-8 locale set at start (LC_CTYPE only).
static inline unsigned int clinux_towlower(unsigned int scalar) { return (unsigned int)towlower((wint_t)scalar); }
static inline int clinux_iswspace(unsigned int scalar) { return iswspace((wint_t)scalar); }

/// A directory entry's name (readdir(3); d_name is an array).
static inline const char *clinux_dirent_name(const struct dirent *entry) { return entry->d_name; }

// The GPIO character device, uAPI v2 (<linux/gpio.h>, Documentation/userspace-api/gpio/):
// no sysfs GPIO. Each call is one ioctl(2); -1 with errno on failure.

/// The number of lines of the gpiochip open at `fd` (GPIO_GET_CHIPINFO_IOCTL).
static inline int clinux_gpiochip_lines(int fd) {
    struct gpiochip_info info;
    memset(&info, 0, sizeof info);
    if (ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, &info) < 0) return -1;
    return (int)info.lines;
}

/// Line `offset`'s name and consumer (GPIO_V2_GET_LINEINFO_IOCTL), each
/// NUL-ended into GPIO_MAX_NAME_SIZE bytes; `used`: 1 when something holds it.
static inline int clinux_gpio_line_info(int fd, unsigned int offset, char *name, char *consumer, int *used) {
    struct gpio_v2_line_info info;
    memset(&info, 0, sizeof info);
    info.offset = offset;
    if (ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, &info) < 0) return -1;
    memcpy(name, info.name, GPIO_MAX_NAME_SIZE);
    name[GPIO_MAX_NAME_SIZE - 1] = 0;
    memcpy(consumer, info.consumer, GPIO_MAX_NAME_SIZE);
    consumer[GPIO_MAX_NAME_SIZE - 1] = 0;
    *used = (info.flags & GPIO_V2_LINE_FLAG_USED) != 0;
    return 0;
}

/// Requests line `offset` as an output driven at `value` from the start
/// (GPIO_V2_GET_LINE_IOCTL, the output-values attribute): the line's
/// descriptor, held until closed.
static inline int clinux_gpio_request_output(int fd, unsigned int offset, int value, const char *consumer) {
    struct gpio_v2_line_request request;
    memset(&request, 0, sizeof request);
    request.offsets[0] = offset;
    request.num_lines = 1;
    strncpy(request.consumer, consumer, GPIO_MAX_NAME_SIZE - 1);
    request.config.flags = GPIO_V2_LINE_FLAG_OUTPUT;
    request.config.num_attrs = 1;
    request.config.attrs[0].attr.id = GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES;
    request.config.attrs[0].attr.values = value ? 1 : 0;
    request.config.attrs[0].mask = 1;
    if (ioctl(fd, GPIO_V2_GET_LINE_IOCTL, &request) < 0) return -1;
    return request.fd;
}

/// Drives the one line requested on `line_fd` (GPIO_V2_LINE_SET_VALUES_IOCTL).
static inline int clinux_gpio_set(int line_fd, int value) {
    struct gpio_v2_line_values values;
    memset(&values, 0, sizeof values);
    values.bits = value ? 1 : 0;
    values.mask = 1;
    return ioctl(line_fd, GPIO_V2_LINE_SET_VALUES_IOCTL, &values);
}

#endif
