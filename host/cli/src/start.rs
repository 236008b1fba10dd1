//! The entry point of a static musl build: ask for the binary's pages the
//! cheap way, then start as usual.
//!
//! Before anything else runs, one `madvise` per loadable segment:
//!
//! - **Read-only segments (code and constants): `MADV_HUGEPAGE`, then a
//!   read of the first byte of each whole 2 MiB, the last first.** Where
//!   the page cache holds none of such a 2 MiB yet, the read brings it in
//!   as one 2 MiB folio; where it holds one, the read maps all of it with
//!   one fault (a fault anywhere else in a folio maps only the 64 KiB
//!   around it), and nothing in those 2 MiB faults again. This needs the
//!   segments to start on 2 MiB boundaries in the file and in memory, as
//!   `start_link.rs` links them. Where the binary's pages were read this
//!   way, `wbr run true` takes about 105 page faults instead of 255 (the
//!   README's "The runner without a compiler" gives the times); where the
//!   cache holds small folios (the binary was just written, or read in
//!   before), the reads cost about 17 faults that map 64 KiB each. Pages the kernel
//!   read before this stub ran (around the entry point: as far as the
//!   disk's read-ahead, 8 MiB on that VM) stay in small folios. The price:
//!   a cold start reads the binary whole, and the page cache keeps all of
//!   it, tens of MB, rather than the pages it touches.
//! - **The writable segment of a position-independent (`ET_DYN`) binary:
//!   `MADV_POPULATE_WRITE`.** A static-pie binary relocates itself before
//!   `main` (musl's `_start` writes every pointer in `.data.rel.ro`, `.got`
//!   and `.data`), and each first write to a page of that private file
//!   mapping is a copy-on-write fault: about 160 of them for this CLI,
//!   taken one at a time. The kernel makes those copies in one call
//!   (Linux 5.14 and later) for about a third of the cost. A fixed-address
//!   build has nothing to relocate, and faulting its whole writable
//!   segment in would cost more than the pages it touches.
//!
//! This stub runs before anything is relocated, so it is
//! position-independent assembly only: it finds the segments through the
//! binary's own program headers (`__ehdr_start`), ignores every result (an
//! older kernel, or one without transparent huge pages, says `EINVAL` and
//! the pages fault as before) and jumps to musl's `_start` with the
//! registers the kernel gave it. The build scripts make it the entry
//! (`-e workbooks_populate_then_start`, through `start_link.rs`) only for
//! x86_64 musl binaries; everywhere else it is not linked in.
//! It writes no memory, and reads only the ELF headers and one byte of
//! each whole 2 MiB of its read-only segments.

#![expect(
    unsafe_code,
    reason = "an entry stub in assembly that runs before relocation"
)]

core::arch::global_asm!(
    ".pushsection .text.workbooks_populate_then_start,\"ax\",@progbits",
    ".globl workbooks_populate_then_start",
    ".type workbooks_populate_then_start,@function",
    "workbooks_populate_then_start:",
    // rdx is the entry's (the kernel's zero). A system call clobbers rcx
    // and r11 only; nothing at entry needs rbx or r12-r15.
    "mov r10, rdx",
    "lea r8, [rip + __ehdr_start]",
    // rbx: e_type (ET_DYN, 3, is position-independent); r9: the program
    // headers (e_phoff); r12d: how many (e_phnum); r13: the size of each
    // (e_phentsize).
    "movzx ebx, word ptr [r8 + 16]",
    "mov r9, qword ptr [r8 + 32]",
    "add r9, r8",
    "movzx r12d, word ptr [r8 + 56]",
    "movzx r13d, word ptr [r8 + 54]",
    "2:",
    "test r12d, r12d",
    "jz 5f",
    // PT_LOAD only.
    "cmp dword ptr [r9], 1",
    "jne 4f",
    // rdi: where the segment starts (p_vaddr, plus the load address in an
    // ET_DYN image, whose ELF header is at its address 0).
    "mov rdi, qword ptr [r9 + 16]",
    "cmp ebx, 3",
    "jne 6f",
    "add rdi, r8",
    "6:",
    // PF_W: the segment relocation writes.
    "test dword ptr [r9 + 4], 2",
    "jnz 3f",
    // Read-only: madvise(its pages, p_memsz, MADV_HUGEPAGE).
    "mov rsi, qword ptr [r9 + 40]",
    "mov edx, 14",
    "jmp 7f",
    "3:",
    // Writable, in an ET_DYN image only: madvise(its pages up to the end of
    // its file-backed bytes, p_filesz, MADV_POPULATE_WRITE).
    "cmp ebx, 3",
    "jne 4f",
    "mov rsi, qword ptr [r9 + 32]",
    "mov edx, 23",
    "7:",
    "add rsi, rdi",
    "and rdi, -4096",
    "sub rsi, rdi",
    "mov eax, 28",
    "syscall",
    // After MADV_HUGEPAGE, read the first byte of every whole 2 MiB of the
    // segment, the last first. A fault on a folio's first page maps the
    // whole of a 2 MiB folio at once (a fault elsewhere in it maps only
    // the 64 KiB around it); where the page cache holds nothing yet, it
    // reads in 2 MiB folios. From the last down, as reading ahead fills
    // the 2 MiB after a read with smaller folios. rdi and rsi survive
    // the call.
    "cmp edx, 14",
    "jne 4f",
    "lea rax, [rdi + rsi]",
    "and rax, -0x200000",
    "add rdi, 0x1fffff",
    "and rdi, -0x200000",
    "8:",
    "sub rax, 0x200000",
    "cmp rax, rdi",
    "jb 4f",
    "mov cl, byte ptr [rax]",
    "jmp 8b",
    "4:",
    "add r9, r13",
    "dec r12d",
    "jmp 2b",
    "5:",
    "mov rdx, r10",
    "jmp _start",
    ".size workbooks_populate_then_start, . - workbooks_populate_then_start",
    ".popsection",
);
