/* Another user answering where a daemon would: binds the socket at
 * argv[1] while it may, opens argv[2] to keep what it hears, then becomes
 * uid/gid 65534 and listens, as a process of that user would, and writes
 * down every byte a client sends it. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
    unlink(argv[1]);
    if (bind(s, (struct sockaddr *)&addr, sizeof addr) != 0) { perror("bind"); return 2; }
    chmod(argv[1], 0777);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0666);
    if (out < 0 || setgid(65534) != 0 || setuid(65534) != 0) { perror("drop"); return 2; }
    if (listen(s, 8) != 0) { perror("listen"); return 2; }
    puts("listening");
    fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        char buf[4096];
        ssize_t n;
        while ((n = read(c, buf, sizeof buf)) > 0) write(out, buf, (size_t)n);
        close(c);
    }
}
