/* Native code that escaped its guest, standing in for the container
 * tier's child: the engine starts it exactly where it would start `wbx`
 * (same bubblewrap root, same seccomp filters and limits, the same
 * descriptors: the relay socket at 5, the sealed compiled code at 6, the
 * guest at 7), and it does what the tier forbids, one line each on
 * stderr: `name=ok` when the attack worked, `name=E<errno>` when the
 * kernel refused it. Paths it goes after come in at compile time
 * (-DENGINE_HOME=..., -DUSER_HOME=..., -DWORK_DIR=..., -DPARENT=...). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static void said(const char *what, long rc) {
    if (rc < 0) {
        fprintf(stderr, "%s=E%d\n", what, errno);
    } else {
        fprintf(stderr, "%s=ok\n", what);
    }
}

static void opened(const char *what, const char *path, int flags) {
    int fd = open(path, flags);
    said(what, fd);
    if (fd >= 0) close(fd);
}

static long write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static long read_all(int fd, void *buf, size_t len) {
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n <= 0) return n < 0 ? -1 : (long)got;
        got += (size_t)n;
    }
    return (long)got;
}

/* One relay call: its postcard bytes; prints `name=status/first byte`. */
static void relayed(const char *what, uint64_t id, const unsigned char *call, uint32_t len) {
    unsigned char head[12];
    uint32_t total = 8 + len;
    memcpy(head, &total, 4);
    memcpy(head + 4, &id, 8);
    if (write_all(5, head, 12) < 0 || write_all(5, call, len) < 0) {
        said(what, -1);
        return;
    }
    unsigned char answer[4096];
    if (read_all(5, answer, 12) != 12) {
        fprintf(stderr, "%s=closed\n", what);
        return;
    }
    uint32_t n;
    memcpy(&n, answer, 4);
    n -= 8;
    if (n > sizeof answer || read_all(5, answer, n) != (long)n) {
        fprintf(stderr, "%s=closed\n", what);
        return;
    }
    /* Status 0: a typed result follows, whose first byte is 0 for Ok and
     * 1 for Err; status 1: refused, with the reason. */
    if (answer[0] == 0) {
        fprintf(stderr, "%s=%s\n", what, answer[1] == 0 ? "answered-ok" : "answered-err");
    } else {
        fprintf(stderr, "%s=refused\n", what);
    }
}

int main(void) {
    char path[4096];
    /* The engine's home, its key and its tenants' state. */
    opened("home", ENGINE_HOME, O_RDONLY | O_DIRECTORY);
    opened("cache_key", ENGINE_HOME "/cache.key", O_RDONLY);
    opened("db", ENGINE_HOME "/db", O_RDONLY | O_DIRECTORY);
    opened("secrets", ENGINE_HOME "/secrets", O_RDONLY | O_DIRECTORY);
    opened("compiled", ENGINE_HOME "/cache/compiled", O_RDONLY | O_DIRECTORY);
    opened("daemon_socket_dir", ENGINE_HOME, O_RDONLY | O_PATH);
    /* The user's data and the rest of the host. */
    opened("user_home", USER_HOME, O_RDONLY | O_DIRECTORY);
    opened("work", WORK_DIR, O_RDONLY | O_DIRECTORY);
    opened("etc_passwd", "/etc/passwd", O_RDONLY);
    opened("var", "/var", O_RDONLY | O_DIRECTORY);
    snprintf(path, sizeof path, "/proc/%d/root%s/cache.key", PARENT, ENGINE_HOME);
    opened("parent_root", path, O_RDONLY);
    opened("new_file_in_root", "/usr/pwned", O_WRONLY | O_CREAT);
    /* The code the parent handed over, shared with every child of it. */
    said("code_write", write(6, "x", 1));
    said("code_truncate", ftruncate(6, 0));
    int again = open("/proc/self/fd/6", O_RDWR);
    said("code_reopen_write", again < 0 ? -1 : write(again, "x", 1));
    said("guest_write", write(7, "x", 1));
    /* Anything that reaches out, or out of the sandbox. */
    said("socket_unix", socket(AF_UNIX, SOCK_STREAM, 0));
    said("socket_inet", socket(AF_INET, SOCK_STREAM, 0));
    said("unshare", syscall(SYS_unshare, CLONE_NEWUSER));
    said("setns", syscall(SYS_setns, 0, 0));
    said("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
    said("io_uring_setup", syscall(SYS_io_uring_setup, 8, path));
    said("ptrace", syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0));
    said("process_vm_readv", syscall(SYS_process_vm_readv, 1, path, 1, path, 1, 0));
    said("bpf", syscall(SYS_bpf, 0, path, 0));
    said("userfaultfd", syscall(SYS_userfaultfd, 0));
    said("perf_event_open", syscall(SYS_perf_event_open, path, 0, -1, -1, 0));
    said("keyctl", syscall(SYS_keyctl, 0, 0, 0, 0, 0));
    said("fork", fork());
    /* The relay: calls of caps the command may not have, a job number
     * made up, a key of another tenant, then a frame far past the cap. */
    static const unsigned char kv_put[] = {0, 1, 5, 'p', 'w', 'n', 'e', 'd', 1, 'x'};
    relayed("relay_kv_put", 1, kv_put, sizeof kv_put);
    static const unsigned char keys_sign[] = {3, 1, 10, 'v', 'i', 'c', 't', 'i', 'm', '-', 'k', 'e', 'y', 1, 'x'};
    relayed("relay_sign_victim_key", 2, keys_sign, sizeof keys_sign);
    static const unsigned char job_wait[] = {4, 4, 7};
    relayed("relay_wait_made_up_job", 3, job_wait, sizeof job_wait);
    unsigned char bomb[12];
    uint32_t huge = 0xffffffffu;
    uint64_t id = 4;
    memcpy(bomb, &huge, 4);
    memcpy(bomb + 4, &id, 8);
    write_all(5, bomb, 12);
    unsigned char after[1];
    fprintf(stderr, "relay_after_bomb=%s\n", read(5, after, 1) == 0 ? "closed" : "open");
    /* What filters it runs under. */
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    while (status && fgets(line, sizeof line, status)) {
        if (strncmp(line, "Seccomp_filters:", 16) == 0 || strncmp(line, "NoNewPrivs:", 11) == 0) {
            fputs(line, stderr);
        }
    }
    return 3;
}
