//! The entry point of a static-pie musl build: populate the writable
//! segment in one call, then start as usual.
//!
//! A static-pie binary relocates itself before `main` (musl's `_start`
//! writes every pointer in `.data.rel.ro`, `.got` and `.data`), and each
//! first write to a page of that private file mapping is a copy-on-write
//! fault: about 160 of them for this CLI, taken one at a time. The kernel
//! can make those copies in a single `madvise(MADV_POPULATE_WRITE)` (Linux
//! 5.14 and later) for about a third of the cost. This stub runs before
//! anything is relocated, so it is position-independent assembly only: it
//! finds the writable `PT_LOAD` through the binary's own program headers
//! (`__ehdr_start`), asks for its file-backed pages, ignores the result (an
//! older kernel says `EINVAL` and the faults happen as before) and jumps to
//! musl's `_start` with the registers the kernel gave it.
//!
//! It acts only on a position-independent binary (`ET_DYN`): a
//! fixed-address build has nothing to relocate, and faulting its whole
//! writable segment in would cost more than the pages it touches. The
//! build scripts make it the entry (`-e workbooks_populate_then_start`,
//! through `start_link.rs`) only for x86_64 musl binaries; everywhere else
//! it is not linked in.
//! Nothing here reads or writes memory but the ELF headers.

#![expect(
    unsafe_code,
    reason = "an entry stub in assembly that runs before relocation"
)]

core::arch::global_asm!(
    ".pushsection .text.workbooks_populate_then_start,\"ax\",@progbits",
    ".globl workbooks_populate_then_start",
    ".type workbooks_populate_then_start,@function",
    "workbooks_populate_then_start:",
    // rdx is the entry's (the kernel's zero); madvise leaves r10 alone.
    "mov r10, rdx",
    "lea r8, [rip + __ehdr_start]",
    // e_type: only an ET_DYN binary relocates itself.
    "cmp word ptr [r8 + 16], 3",
    "jne 5f",
    // r9: the program headers (e_phoff), ecx: how many (e_phnum),
    // r11: the size of each (e_phentsize).
    "mov r9, qword ptr [r8 + 32]",
    "add r9, r8",
    "movzx ecx, word ptr [r8 + 56]",
    "movzx r11d, word ptr [r8 + 54]",
    "2:",
    "test ecx, ecx",
    "jz 5f",
    // A PT_LOAD with PF_W: the segment relocation writes.
    "cmp dword ptr [r9], 1",
    "jne 3f",
    "test dword ptr [r9 + 4], 2",
    "jz 3f",
    // From its first page to the end of its file-backed bytes (p_vaddr,
    // p_filesz; the ELF header is at address 0 of an ET_DYN image).
    "mov rdi, qword ptr [r9 + 16]",
    "add rdi, r8",
    "mov rsi, qword ptr [r9 + 32]",
    "add rsi, rdi",
    "and rdi, -4096",
    "sub rsi, rdi",
    // madvise(start, len, MADV_POPULATE_WRITE)
    "mov edx, 23",
    "mov eax, 28",
    "syscall",
    "jmp 5f",
    "3:",
    "add r9, r11",
    "dec ecx",
    "jmp 2b",
    "5:",
    "mov rdx, r10",
    "jmp _start",
    ".size workbooks_populate_then_start, . - workbooks_populate_then_start",
    ".popsection",
);
