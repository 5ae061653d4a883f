/* For the TCP transport's tests, as an LD_PRELOAD shim: each getaddrinfo(3)
 * call's host is appended to $RESOLVER_LOG (one line), then libc's runs.
 * A numeric address must not reach it (Tests/Lifecycle/test_tcp_addresses.py).
 * Build: cc -shared -fPIC -o resolver_watch.so resolver_watch.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int getaddrinfo(const char *host, const char *service, const struct addrinfo *hints, struct addrinfo **result) {
    const char *path = getenv("RESOLVER_LOG");
    int fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd >= 0) {
        const char *name = host ? host : "(null)";
        (void)!write(fd, name, strlen(name));
        (void)!write(fd, "\n", 1);
        close(fd);
    }
    int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **) = dlsym(RTLD_NEXT, "getaddrinfo");
    return real(host, service, hints, result);
}
