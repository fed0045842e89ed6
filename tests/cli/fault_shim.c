/* fault_shim.c - LD_PRELOAD helper of test_faults.sh: another process cutting
 * a file short while mans reads it, at a chosen point and deterministically.
 *
 *   MANS_FAULT_FILE=PATH MANS_FAULT_AFTER=N MANS_FAULT_CUT_TO=M mans ...
 *
 * At the first read()/pread() of PATH (any descriptor of that inode) after N
 * bytes of it were read, PATH is truncated to M bytes, once, and then that
 * read runs. Nothing else changes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static unsigned long long bytes_seen;
static int cut_done;

/* True when fd is PATH; cuts PATH first when the point has come. */
static int before_read(int fd) {
    const char* path = getenv("MANS_FAULT_FILE");
    struct stat a, b;
    if (!path || fstat(fd, &a) != 0 || stat(path, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return 0;
    const char* after = getenv("MANS_FAULT_AFTER");
    const char* to = getenv("MANS_FAULT_CUT_TO");
    if (!cut_done && bytes_seen >= strtoull(after ? after : "0", NULL, 10)) {
        cut_done = 1;
        if (truncate(path, (off_t)strtoll(to ? to : "0", NULL, 10)) != 0) abort();
    }
    return 1;
}

static ssize_t count(int mine, ssize_t got) {
    if (mine && got > 0) bytes_seen += (unsigned long long)got;
    return got;
}

ssize_t read(int fd, void* buf, size_t n) {
    static ssize_t (*real)(int, void*, size_t);
    if (!real) real = (ssize_t(*)(int, void*, size_t))dlsym(RTLD_NEXT, "read");
    const int saved = errno, mine = before_read(fd);
    errno = saved;
    return count(mine, real(fd, buf, n));
}

ssize_t pread(int fd, void* buf, size_t n, off_t off) {
    static ssize_t (*real)(int, void*, size_t, off_t);
    if (!real) real = (ssize_t(*)(int, void*, size_t, off_t))dlsym(RTLD_NEXT, "pread");
    const int saved = errno, mine = before_read(fd);
    errno = saved;
    return count(mine, real(fd, buf, n, off));
}

ssize_t pread64(int fd, void* buf, size_t n, off_t off) {
    static ssize_t (*real)(int, void*, size_t, off_t);
    if (!real) real = (ssize_t(*)(int, void*, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
    const int saved = errno, mine = before_read(fd);
    errno = saved;
    return count(mine, real(fd, buf, n, off));
}
