/* crc32: the CRC-32 (IEEE 802.3, as zlib and PNG use) of stdin, in hex. */
#include <stdint.h>
#include <stdio.h>

int main(void) {
    uint32_t table[256];
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        }
        table[n] = c;
    }
    uint32_t crc = 0xffffffffu;
    static unsigned char buf[65536]; /* not on the stack: wasm-ld gives 64 KiB */
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, stdin)) > 0) {
        for (size_t i = 0; i < got; i++) {
            crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
        }
    }
    printf("%08x\n", crc ^ 0xffffffffu);
    return ferror(stdin) ? 1 : 0;
}
