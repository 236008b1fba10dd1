/* A child that tries what the container tier's OS ceilings forbid, run
 * inside the same sandbox under the same ceilings:
 *   fork            makes a process; prints "forked" or "fork refused: E<n>"
 *   threads N       makes N threads; prints "threads made: <k>"
 *   memory S B      takes S MiB, then B MiB more, touching every page;
 *                   prints "S MiB ok" and "B MiB granted" / "B MiB refused"
 *   spin            spins until the kernel stops it
 *   shared          tries every way to memory RLIMIT_DATA does not count:
 *                   a shared mapping, a memfd, a file in /dev or /dev/shm,
 *                   128 MiB of files in /tmp, descriptors without end;
 *                   prints one line per way */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *idle(void *arg) {
    (void)arg;
    sleep(5);
    return NULL;
}

static int take(size_t mib) {
    size_t bytes = mib << 20;
    char *p = malloc(bytes);
    if (!p) return 0;
    memset(p, 1, bytes);
    return 1;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2) return 2;
    if (strcmp(argv[1], "fork") == 0) {
        puts("started");
        pid_t pid = fork();
        if (pid == 0) _exit(0);
        if (pid < 0) {
            printf("fork refused: E%d\n", errno);
        } else {
            waitpid(pid, NULL, 0);
            puts("forked");
        }
    } else if (strcmp(argv[1], "threads") == 0) {
        int n = atoi(argv[2]), made = 0;
        for (int i = 0; i < n; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, idle, NULL) != 0) break;
            made++;
        }
        printf("threads made: %d\n", made);
    } else if (strcmp(argv[1], "memory") == 0) {
        size_t small = (size_t)atoi(argv[2]), big = (size_t)atoi(argv[3]);
        if (take(small)) printf("%zu MiB ok\n", small);
        printf(take(big) ? "%zu MiB granted\n" : "%zu MiB refused\n", big);
    } else if (strcmp(argv[1], "shared") == 0) {
        void *m = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) printf("shared map refused: E%d\n", errno);
        else puts("shared map granted");
        long fd = syscall(SYS_memfd_create, "x", 0);
        if (fd < 0) printf("memfd refused: E%d\n", errno);
        else puts("memfd granted");
        const char *devs[] = {"/dev/x", "/dev/shm/x"};
        for (int i = 0; i < 2; i++) {
            int f = open(devs[i], O_WRONLY | O_CREAT, 0600);
            if (f < 0) printf("%s refused: E%d\n", devs[i], errno);
            else printf("%s granted\n", devs[i]);
        }
        int t = open("/tmp/fill", O_WRONLY | O_CREAT, 0600);
        static char block[1 << 20];
        int mib = 0;
        while (t >= 0 && mib < 128 && write(t, block, sizeof block) == (ssize_t)sizeof block) mib++;
        printf("tmp took %d MiB\n", mib);
        int opened = 0;
        while (opened < 100000 && open("/dev/null", O_RDONLY) >= 0) opened++;
        printf("descriptors opened: %d\n", opened);
    } else if (strcmp(argv[1], "spin") == 0) {
        for (volatile unsigned long i = 0;; i++) {
        }
    }
    return 0;
}
