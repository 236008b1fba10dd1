/* A child that tries what the container tier's OS ceilings forbid, run
 * inside the same sandbox under the same ceilings:
 *   fork            makes a process; prints "forked" or "fork refused: E<n>"
 *   threads N       makes N threads; prints "threads made: <k>"
 *   memory S B      takes S MiB, then B MiB more, touching every page;
 *                   prints "S MiB ok" and "B MiB granted" / "B MiB refused"
 *   spin            spins until the kernel stops it */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    } else if (strcmp(argv[1], "spin") == 0) {
        for (volatile unsigned long i = 0;; i++) {
        }
    }
    return 0;
}
