/**
 * LLDB's language for probes: each probe renders as the command a user at an lldb prompt would
 * type (with dumpdbg's `[thread T, frame F]` prefix for another place), lldb's output is read into
 * the same model gdb's is (values in gdb's one-line C form, instructions in gdb's AT&T spelling),
 * and a command lldb users type is recognised as the probe it is.
 *
 * Every output below is real: captured with `lldb-16 --batch -s FORMATS -c core EXE -o CMD` from
 * the fixture cores (tests/fixtures/programs) and two scratch programs, after the settings
 * dumpdbg's LLDB session makes (`lldb-session.ts`: AT&T disassembly, its frame-format,
 * thread-format and thread-stop-format). The session drops lldb's `(lldb) CMD` echo, and so do
 * these excerpts; a command shown `[frame F]` was captured after `frame select F`.
 */
import { describe, expect, it } from "vitest";
import { lldbMinidumpVocabulary, lldbVocabulary } from "../../src/debuggers/lldb/vocabulary.js";
import { probeKey, probes, type Probe } from "../../src/debuggers/probe.js";

const { render, read, recognise, movesSelection } = lldbVocabulary;

// null-deref: a SIGSEGV in send_to_client through session->client == NULL
/** thread list */
const ND_THREADS = `Process 15014 stopped
* thread #1: tid = 15014, 0x0000562c133cd1e7 null-deref\`send_to_client(session=0x0000562c3569c2f0, message="") at /work/main/tests/fixtures/programs/null-deref.c:27:9, name = 'null-deref', stop reason = signal SIGSEGV`;
/** thread backtrace --count 41 */
const ND_BT = `* thread #1: tid = 15014, name = 'null-deref', stop reason = signal SIGSEGV
  * frame #0: 0x0000562c133cd1e7 null-deref\`send_to_client(session=0x0000562c3569c2f0, message="") at /work/main/tests/fixtures/programs/null-deref.c:27:9
    frame #1: 0x0000562c133cd25e null-deref\`broadcast(sessions=0x00007ffe3f157d10, count=3, message="") at /work/main/tests/fixtures/programs/null-deref.c:35:9
    frame #2: 0x0000562c133cd35b null-deref\`main at /work/main/tests/fixtures/programs/null-deref.c:50:5
    frame #3: 0x00007f9ef7a4624a libc.so.6\`__libc_start_call_main(main=(null-deref\`main at null-deref.c:39:1), argc=1, argv=0x00007ffe3f157e58) at sysdeps/nptl/libc_start_call_main.h:58:16
    frame #4: 0x00007f9ef7a46305 libc.so.6\`__libc_start_main_impl(main=(null-deref\`main at null-deref.c:39:1), argc=1, argv=0x00007ffe3f157e58, init=<unavailable>, fini=<unavailable>, rtld_fini=<unavailable>, stack_end=0x00007ffe3f157e48) at csu/libc-start.c:360:3
    frame #5: 0x0000562c133cd0b1 null-deref\`_start + 33`;
/** register read */
const ND_REGS = `General Purpose Registers:
       rax = 0x0000000000000000
       rbx = 0x0000562c3569c340
       rcx = 0x0000000000000001
       rdx = 0x0000562c133ce02e  
       rdi = 0x0000562c3569c2f0
       rsi = 0x0000562c133ce02e  
       rbp = 0x00007ffe3f157cc0
       rsp = 0x00007ffe3f157c90
        r8 = 0x0000000000000007
        r9 = 0x0000562c3569c310
       r10 = 0xa5739fc6793553b0
       r11 = 0x00007f9ef7ab7ef0  libc.so.6\`__GI___libc_free at malloc.c:3350:6
       r12 = 0x0000000000000000
       r13 = 0x00007ffe3f157e68
       r14 = 0x0000562c133cfdd8  null-deref\`__do_global_dtors_aux_fini_array_entry
       r15 = 0x00007f9ef7c49020  _rtld_global
       rip = 0x0000562c133cd1e7  null-deref\`send_to_client + 25 at null-deref.c:27:9
    rflags = 0x0000000000010206
        cs = 0x0000000000000033
        fs = 0x0000000000000000
        gs = 0x0000000000000000
        ss = 0x000000000000002b
        ds = 0x0000000000000000
        es = 0x0000000000000000`;
/** register read (frame 1: lldb knows only the callee-saved registers and rip) */
const ND_REGS_F1 = `General Purpose Registers:
       rbx = 0x0000562c3569c340
       rbp = 0x00007ffe3f157d00
       rsp = 0x00007ffe3f157cd0
       r12 = 0x0000000000000000
       r13 = 0x00007ffe3f157e68
       r14 = 0x0000562c133cfdd8  null-deref\`__do_global_dtors_aux_fini_array_entry
       r15 = 0x00007f9ef7c49020  _rtld_global
       rip = 0x0000562c133cd25e  null-deref\`broadcast + 66 at null-deref.c:34:33
16 registers were unavailable.`;
/** register read sp */
const ND_REG_SP = `     rsp = 0x00007ffe3f157c90`;
/** [frame 1] register read sp */
const ND_REG_SP_F1 = `     rsp = 0x00007ffe3f157cd0`;
/** [frame 1] register read rip rsp rbp */
const ND_REG_PICK = `     rip = 0x0000562c133cd25e  null-deref\`broadcast + 66 at null-deref.c:34:33
     rsp = 0x00007ffe3f157cd0
     rbp = 0x00007ffe3f157d00`;
/** register read xmm0 rip */
const ND_REG_XMM = `    xmm0 = {0x90 0xc3 0x69 0x35 0x2c 0x56 0x00 0x00 0x90 0xc3 0x69 0x35 0x2c 0x56 0x00 0x00}
     rip = 0x0000562c133cd1e7  null-deref\`send_to_client + 25 at null-deref.c:27:9`;
/** register read eflags */
const ND_REG_BAD = `error: Invalid register name 'eflags'.`;
/** frame variable --no-args */
const ND_LOCALS = `(int) fd = 10`;
/** frame variable --no-locals */
const ND_ARGS = `(session *) session = 0x0000562c3569c2f0
(const char *) message = 0x0000562c133ce02e ""`;
/** expression -- session */
const ND_E_SESSION = `(session *) $0 = 0x0000562c3569c2f0`;
/** expression -- *session */
const ND_E_STAR = `(session) $0 = {
  id = 1
  client = NULL
}`;
/** expression -- session->client */
const ND_E_CLIENT = `(client *) $0 = NULL`;
/** expression -- message (the core holds no copy of .rodata: lldb 16 reads the literal as empty) */
const ND_E_MESSAGE = `(const char *) $0 = 0x0000562c133ce02e ""`;
/** expression --format x -- session->id */
const ND_E_HEX = `(int) $0 = 0x00000001`;
/** expression -- session->nope */
const ND_E_BAD = `error: expression failed to parse:
error: <user expression 0>:1:10: no member named 'nope' in 'session'
session->nope
~~~~~~~  ^`;
/** [frame 1] expression -- *sessions[0]->client */
const ND_E_ONELINE = `(client) $0 = (name = char[32] @ 0x000055cad074b1a0, fd = 10, bytes_sent = 21)`;
/** disassemble --bytes --frame */
const ND_DIS_F0 = `null-deref\`send_to_client:
    0x562c133cd1ce <+0>:  55              pushq  %rbp
    0x562c133cd1cf <+1>:  48 89 e5        movq   %rsp, %rbp
    0x562c133cd1d2 <+4>:  53              pushq  %rbx
    0x562c133cd1d3 <+5>:  48 83 ec 28     subq   $0x28, %rsp
    0x562c133cd1d7 <+9>:  48 89 7d d8     movq   %rdi, -0x28(%rbp)
    0x562c133cd1db <+13>: 48 89 75 d0     movq   %rsi, -0x30(%rbp)
    0x562c133cd1df <+17>: 48 8b 45 d8     movq   -0x28(%rbp), %rax
    0x562c133cd1e3 <+21>: 48 8b 40 08     movq   0x8(%rax), %rax
->  0x562c133cd1e7 <+25>: 8b 40 20        movl   0x20(%rax), %eax
    0x562c133cd1ea <+28>: 89 45 ec        movl   %eax, -0x14(%rbp)
    0x562c133cd1ed <+31>: 48 8b 45 d8     movq   -0x28(%rbp), %rax
    0x562c133cd1f1 <+35>: 48 8b 40 08     movq   0x8(%rax), %rax
    0x562c133cd1f5 <+39>: 8b 58 24        movl   0x24(%rax), %ebx
    0x562c133cd1f8 <+42>: 48 8b 45 d0     movq   -0x30(%rbp), %rax
    0x562c133cd1fc <+46>: 48 89 c7        movq   %rax, %rdi
    0x562c133cd1ff <+49>: e8 3c fe ff ff  callq  0x1040                    ; symbol stub for: strlen
    0x562c133cd204 <+54>: 89 c2           movl   %eax, %edx
    0x562c133cd206 <+56>: 48 8b 45 d8     movq   -0x28(%rbp), %rax
    0x562c133cd20a <+60>: 48 8b 40 08     movq   0x8(%rax), %rax
    0x562c133cd20e <+64>: 01 da           addl   %ebx, %edx
    0x562c133cd210 <+66>: 89 50 24        movl   %edx, 0x24(%rax)
    0x562c133cd213 <+69>: 8b 45 ec        movl   -0x14(%rbp), %eax
    0x562c133cd216 <+72>: 48 8b 5d f8     movq   -0x8(%rbp), %rbx
    0x562c133cd21a <+76>: c9              leave  
    0x562c133cd21b <+77>: c3              retq   `;
/** [frame 1] disassemble --bytes --frame */
const ND_DIS_F1 = `null-deref\`broadcast:
    0x562c133cd21c <+0>:  55                       pushq  %rbp
    0x562c133cd21d <+1>:  48 89 e5                 movq   %rsp, %rbp
    0x562c133cd220 <+4>:  48 83 ec 30              subq   $0x30, %rsp
    0x562c133cd224 <+8>:  48 89 7d e8              movq   %rdi, -0x18(%rbp)
    0x562c133cd228 <+12>: 89 75 e4                 movl   %esi, -0x1c(%rbp)
    0x562c133cd22b <+15>: 48 89 55 d8              movq   %rdx, -0x28(%rbp)
    0x562c133cd22f <+19>: c7 45 fc 00 00 00 00     movl   $0x0, -0x4(%rbp)
    0x562c133cd236 <+26>: eb 2a                    jmp    0x1262                    ; <+70> at null-deref.c:34:23
    0x562c133cd238 <+28>: 8b 45 fc                 movl   -0x4(%rbp), %eax
    0x562c133cd23b <+31>: 48 98                    cltq   
    0x562c133cd23d <+33>: 48 8d 14 c5 00 00 00 00  leaq   (,%rax,8), %rdx
    0x562c133cd245 <+41>: 48 8b 45 e8              movq   -0x18(%rbp), %rax
    0x562c133cd249 <+45>: 48 01 d0                 addq   %rdx, %rax
    0x562c133cd24c <+48>: 48 8b 00                 movq   (%rax), %rax
    0x562c133cd24f <+51>: 48 8b 55 d8              movq   -0x28(%rbp), %rdx
    0x562c133cd253 <+55>: 48 89 d6                 movq   %rdx, %rsi
    0x562c133cd256 <+58>: 48 89 c7                 movq   %rax, %rdi
    0x562c133cd259 <+61>: e8 70 ff ff ff           callq  0x11ce                    ; send_to_client at null-deref.c:26:1
->  0x562c133cd25e <+66>: 83 45 fc 01              addl   $0x1, -0x4(%rbp)
    0x562c133cd262 <+70>: 8b 45 fc                 movl   -0x4(%rbp), %eax
    0x562c133cd265 <+73>: 3b 45 e4                 cmpl   -0x1c(%rbp), %eax
    0x562c133cd268 <+76>: 7c ce                    jl     0x1238                    ; <+28> at null-deref.c:35:32
    0x562c133cd26a <+78>: 90                       nop    
    0x562c133cd26b <+79>: 90                       nop    
    0x562c133cd26c <+80>: c9                       leave  
    0x562c133cd26d <+81>: c3                       retq   `;
/** [frame 2] disassemble --bytes --frame (excerpt) */
const ND_DIS_MAIN = `null-deref\`main:
    0x562c133cd26e <+0>:   55                    pushq  %rbp
    0x562c133cd26f <+1>:   48 89 e5              movq   %rsp, %rbp
    0x562c133cd272 <+4>:   53                    pushq  %rbx
    0x562c133cd273 <+5>:   48 83 ec 28           subq   $0x28, %rsp
    0x562c133cd277 <+9>:   c7 45 ec 00 00 00 00  movl   $0x0, -0x14(%rbp)
    0x562c133cd27e <+16>:  e9 92 00 00 00        jmp    0x1315                    ; <+167> at null-deref.c:41:23
    0x562c133cd283 <+21>:  be 10 00 00 00        movl   $0x10, %esi
    0x562c133cd2e1 <+115>: 48 8d 05 37 0d 00 00  leaq   0xd37(%rip), %rax
    0x562c133cd2e8 <+122>: 48 89 c2              movq   %rax, %rdx
    0x562c133cd319 <+171>: 0f 8e 64 ff ff ff     jle    0x1283                    ; <+21> at null-deref.c:42:23
    0x562c133cd31f <+177>: 48 8d 45 d0           leaq   -0x30(%rbp), %rax
    0x562c133cd323 <+181>: 48 8d 15 fc 0c 00 00  leaq   0xcfc(%rip), %rdx
    0x562c133cd356 <+232>: e8 c1 fe ff ff        callq  0x121c                    ; broadcast at null-deref.c:33:1
->  0x562c133cd35b <+237>: b8 00 00 00 00        movl   $0x0, %eax
    0x562c133cd360 <+242>: 48 8b 5d f8           movq   -0x8(%rbp), %rbx
    0x562c133cd364 <+246>: c9                    leave  
    0x562c133cd365 <+247>: c3                    retq   `;
/** [frame 1] disassemble --bytes --pc --count 4 */
const ND_INSNS = `null-deref\`broadcast:
->  0x562c133cd25e <+66>: 83 45 fc 01  addl   $0x1, -0x4(%rbp)
    0x562c133cd262 <+70>: 8b 45 fc     movl   -0x4(%rbp), %eax
    0x562c133cd265 <+73>: 3b 45 e4     cmpl   -0x1c(%rbp), %eax
    0x562c133cd268 <+76>: 7c ce        jl     0x1238                    ; <+28> at null-deref.c:35:32`;
/** disassemble --bytes --start-address 0x0000562c133cd1ce --count 3 */
const ND_INSNS_AT = `null-deref\`send_to_client:
    0x562c133cd1ce <+0>: 55        pushq  %rbp
    0x562c133cd1cf <+1>: 48 89 e5  movq   %rsp, %rbp
    0x562c133cd1d2 <+4>: 53        pushq  %rbx`;
/** image list */
const ND_IMAGES = `[  0] DF0D1686-1CA5-F6ED-65BD-CE01076A4D6A-45219982 0x0000562c133cc000 /tmp/dumpdbg-fixtures/null-deref-df0d16861ca5f6ed-f52299eb/null-deref 
[  1] E95BAAEA-EC85-34ED-C5DF-3654182DDF12-B19D9B23 0x00007f9ef7c14000 [vdso] (0x00007f9ef7c14000)
[  2] 93AC61EC-5A8E-B139-6F9F-BD350E3169A5-58528A40 0x00007f9ef7a1f000 /lib/x86_64-linux-gnu/libc.so.6 
      /usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug
[  3] 7EBC65E5-2F2B-BEA4-98B4-040FA92F7238-377AABA9 0x00007f9ef7c16000 /lib64/ld-linux-x86-64.so.2 
      /usr/lib/debug/.build-id/7e/bc65e52f2bbea498b4040fa92f7238377aaba9.debug`;
/** memory region --all (excerpt) */
const ND_REGIONS = `[0x0000000000000000-0x0000562c133cc000) ---
[0x0000562c133cc000-0x0000562c133cd000) r-- PT_LOAD[0]
[0x0000562c133cd000-0x0000562c133ce000) r-x PT_LOAD[1]
[0x0000562c133ce000-0x0000562c133cf000) r-- PT_LOAD[2]
[0x0000562c133cf000-0x0000562c133d0000) r--
[0x0000562c133d0000-0x0000562c133d1000) rw- PT_LOAD[3]
[0x0000562c133d1000-0x0000562c3569c000) ---
[0x0000562c3569c000-0x0000562c356bd000) rw-
[0x0000562c356bd000-0x00007f9ef7a1c000) ---
[0x00007ffe3f159000-0xffffffffff600000) ---
[0xffffffffff600000-0xffffffffff601000) --x
[0xffffffffff601000-0xffffffffffffffff) ---`;
/** image dump sections (excerpt) */
const ND_SECTIONS = `Dumping sections for 4 modules.
Sections for '/tmp/dumpdbg-fixtures/null-deref-df0d16861ca5f6ed-f52299eb/null-deref' (x86_64):
  SectID     Type             Load Address                             Perm File Off.  File Size  Flags      Section Name
  ---------- ---------------- ---------------------------------------  ---- ---------- ---------- ---------- ----------------------------
  0xfffffffffffffffc container        [0x0000562c133cd000-0x0000562c133cd371)  r-x  0x00001000 0x00000371 0x00000000 null-deref.PT_LOAD[1]
  0x0000000f code             [0x0000562c133cd090-0x0000562c133cd366)  r-x  0x00001090 0x000002d6 0x00000006 null-deref.PT_LOAD[1]..text
  0x00000015 regular          [0x0000562c133cfdd8-0x0000562c133cfde0)  rw-  0x00002dd8 0x00000008 0x00000003 null-deref.PT_LOAD[3]..fini_array
  0x0000001a zero-fill        [0x0000562c133d0038-0x0000562c133d0040)  rw-  0x00003038 0x00000000 0x00000003 null-deref.PT_LOAD[3]..bss
  0x0000001b regular                                                   ---  0x00003038 0x00000027 0x00000030 null-deref..comment
Sections for '[vdso](0x00007f9ef7c14000)' (x86_64):
  SectID     Type             Load Address                             Perm File Off.  File Size  Flags      Section Name
  ---------- ---------------- ---------------------------------------  ---- ---------- ---------- ---------- ----------------------------
  0x0000000c code             [0x00007f9ef7c14780-0x00007f9ef7c1545c)  r-x  0x00000780 0x00000cdc 0x00000006 [vdso].PT_LOAD[0]..text
Sections for '/lib/x86_64-linux-gnu/libc.so.6' (x86_64):
  SectID     Type             Load Address                             Perm File Off.  File Size  Flags      Section Name
  ---------- ---------------- ---------------------------------------  ---- ---------- ---------- ---------- ----------------------------
  0x00000010 code             [0x00007f9ef7a45380-0x00007f9ef7b9922d)  r-x  0x00026380 0x00153ead 0x00000006 libc.so.6.PT_LOAD[1]..text
  0x00000011 code             [0x00007f9ef7b99230-0x00007f9ef7b9a0fc)  r-x  0x0017a230 0x00000ecc 0x00000006 libc.so.6.PT_LOAD[1].__libc_freeres_fn
Sections for '/lib64/ld-linux-x86-64.so.2' (x86_64):
  SectID     Type             Load Address                             Perm File Off.  File Size  Flags      Section Name
  ---------- ---------------- ---------------------------------------  ---- ---------- ---------- ---------- ----------------------------
  0x0000000c code             [0x00007f9ef7c17060-0x00007f9ef7c3c111)  r-x  0x00001060 0x000250b1 0x00000006 ld-linux-x86-64.so.2.PT_LOAD[1]..text`;
/** image lookup --address 0x00007f9ef7ab7ef0 */
const ND_LOOKUP_LIBC = `      Address: libc.so.6[0x0000000000098ef0] (libc.so.6.PT_LOAD[1]..text + 469872)
      Summary: libc.so.6\`__GI___libc_free at malloc.c:3350:6`;
/** image lookup --address 0x562c133cd1e7 */
const ND_LOOKUP_OWN = `      Address: null-deref[0x00000000000011e7] (null-deref.PT_LOAD[1]..text + 343)
      Summary: null-deref\`send_to_client + 25 at null-deref.c:27:9`;
/** image lookup --address 0x562c133cfdd8 */
const ND_LOOKUP_DATA = `      Address: null-deref[0x0000000000003dd8] (null-deref.PT_LOAD[3]..fini_array + 0)
      Summary: null-deref\`__do_global_dtors_aux_fini_array_entry`;
/** source list --file /work/main/tests/fixtures/programs/null-deref.c --line 25 --count 4 */
const ND_SOURCE = `   25  \tstatic int send_to_client(struct session *session, const char *message)
   26  \t{
   27  \t    int fd = session->client->fd; // CULPRIT
   28  \t    session->client->bytes_sent += (int)strlen(message);
   29  \t    return fd;`;
/** memory read --size 8 --format x --count 2 "$rsp + 8" */
const ND_MEM_EXPR = `0x7ffe3f157c98: 0x0000562c3569c2f0 0x00007ffe3f157e68`;
/** memory read --format s --count 3 "*(char **)0x00007ffe3f157e58" (argv[0], then the environment) */
const ND_STRINGS = `0x7ffe3f15853f: "./null-deref"
0x7ffe3f15854c: "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=/etc/ssl/certs/ca-certificates.crt"
0x7ffe3f158590: "BASE_URL=/"`;

// deadlock (gcore of a live process) and thread-crash (SIGSEGV in a worker thread)
/** thread list */
const DL_THREADS = `Process 14236 stopped
* thread #1: tid = 14236, 0x00007feeffbeaf16 libc.so.6\`__futex_abstimed_wait_common at nptl/futex-internal.c:57:12, name = 'deadlock', stop reason = signal SIGSTOP
  thread #2: tid = 14237, 0x00007feeffbeb12b libc.so.6\`__GI___lll_lock_wait at sysdeps/nptl/futex-internal.h:146:13, stop reason = signal SIGSTOP
  thread #3: tid = 14238, 0x00007feeffbeb12b libc.so.6\`__GI___lll_lock_wait at sysdeps/nptl/futex-internal.h:146:13, stop reason = signal SIGSTOP`;
/** thread backtrace --count 3 all */
const DL_ALL = `* thread #1: tid = 14236, name = 'deadlock', stop reason = signal SIGSTOP
  * frame #0: 0x00007feeffbeaf16 libc.so.6\`__futex_abstimed_wait_common at nptl/futex-internal.c:57:12
    frame #1: 0x00007feeffbeaed8 libc.so.6\`__futex_abstimed_wait_common(futex_word=0x00007feeffb61990, expected=14237, clockid=<unavailable>, abstime=0x0000000000000000, private=<unavailable>, cancel=<unavailable>) at nptl/futex-internal.c:87:9
    frame #2: 0x00007feeffbefce3 libc.so.6\`__pthread_clockjoin_ex(threadid=140664469067456, thread_return=0x0000000000000000, clockid=0, abstime=0x0000000000000000, block=<unavailable>) at nptl/pthread_join_common.c:102:14
  thread #2: tid = 14237, stop reason = signal SIGSTOP
    frame #0: 0x00007feeffbeb12b libc.so.6\`__GI___lll_lock_wait at sysdeps/nptl/futex-internal.h:146:13
    frame #1: 0x00007feeffbeb115 libc.so.6\`__GI___lll_lock_wait(futex=0x00007fff1d75f190, private=0) at nptl/lowlevellock.c:49:7
    frame #2: 0x00007feeffbf1482 libc.so.6\`___pthread_mutex_lock at nptl/pthread_mutex_lock.c:48:5
  thread #3: tid = 14238, stop reason = signal SIGSTOP
    frame #0: 0x00007feeffbeb12b libc.so.6\`__GI___lll_lock_wait at sysdeps/nptl/futex-internal.h:146:13
    frame #1: 0x00007feeffbeb115 libc.so.6\`__GI___lll_lock_wait(futex=0x00007fff1d75f1d0, private=0) at nptl/lowlevellock.c:49:7
    frame #2: 0x00007feeffbf1482 libc.so.6\`___pthread_mutex_lock at nptl/pthread_mutex_lock.c:48:5`;
/** thread backtrace --count 2 2 3 */
const DL_SOME = `  thread #2: tid = 14237, stop reason = signal SIGSTOP
    frame #0: 0x00007feeffbeb12b libc.so.6\`__GI___lll_lock_wait at sysdeps/nptl/futex-internal.h:146:13
    frame #1: 0x00007feeffbeb115 libc.so.6\`__GI___lll_lock_wait(futex=0x00007fff1d75f190, private=0) at nptl/lowlevellock.c:49:7
  thread #3: tid = 14238, stop reason = signal SIGSTOP
    frame #0: 0x00007feeffbeb12b libc.so.6\`__GI___lll_lock_wait at sysdeps/nptl/futex-internal.h:146:13
    frame #1: 0x00007feeffbeb115 libc.so.6\`__GI___lll_lock_wait(futex=0x00007fff1d75f1d0, private=0) at nptl/lowlevellock.c:49:7`;
/** thread list */
const TC_THREADS = `Process 15441 stopped
* thread #1: tid = 15444, 0x0000561a1c2ea1bd thread-crash\`process_job(job=0x00007f84a6197eb0) at /work/main/tests/fixtures/programs/thread-crash.c:31:9, name = 'thread-crash', stop reason = signal SIGSEGV
  thread #2: tid = 15441, 0x00007f84a7223f16 libc.so.6\`__futex_abstimed_wait_common at nptl/futex-internal.c:57:12, stop reason = signal 0
  thread #3: tid = 15442, 0x00007f84a7223f16 libc.so.6\`__futex_abstimed_wait_common at nptl/futex-internal.c:57:12, stop reason = signal 0
  thread #4: tid = 15443, 0x00007f84a7223f16 libc.so.6\`__futex_abstimed_wait_common at nptl/futex-internal.c:57:12, stop reason = signal 0
  thread #5: tid = 15445, 0x00007f84a7223f16 libc.so.6\`__futex_abstimed_wait_common at nptl/futex-internal.c:57:12, stop reason = signal 0`;
/** thread backtrace */
const TC_BT = `* thread #1: tid = 15444, name = 'thread-crash', stop reason = signal SIGSEGV
  * frame #0: 0x0000561a1c2ea1bd thread-crash\`process_job(job=0x00007f84a6197eb0) at /work/main/tests/fixtures/programs/thread-crash.c:31:9
    frame #1: 0x0000561a1c2ea2b4 thread-crash\`worker_main(arg=0x00007fff44c910c8) at /work/main/tests/fixtures/programs/thread-crash.c:51:5
    frame #2: 0x00007f84a72271f5 libc.so.6\`start_thread(arg=<unavailable>) at nptl/pthread_create.c:442:8
    frame #3: 0x00007f84a72a78ec libc.so.6\`__clone3 at sysdeps/unix/sysv/linux/x86_64/clone3.S:81`;

// bad-jump: a call through a NULL function pointer, pc = 0
/** thread list */
const BJ_THREADS = `Process 14032 stopped
* thread #1: tid = 14032, 0x0000000000000000, name = 'bad-jump', stop reason = signal SIGSEGV`;
/** thread backtrace --count 3 */
const BJ_BT = `* thread #1: tid = 14032, name = 'bad-jump', stop reason = signal SIGSEGV
  * frame #0: 0x0000000000000000
    frame #1: 0x00005597058b12e3 bad-jump\`dispatch_command(line="") at /work/main/tests/fixtures/programs/bad-jump.c:39:12
    frame #2: 0x00005597058b1329 bad-jump\`main at /work/main/tests/fixtures/programs/bad-jump.c:46:9`;
/** disassemble --bytes --frame */
const BJ_DIS = `error: core file does not contain 0x0
error: Failed to disassemble memory at 0x00000000.`;
/** memory read --size 8 --format x --count 2 0x0 */
const BJ_MEM = `error: core file does not contain 0x0`;

// stack-overflow: 130949 frames of parse_value
/** thread backtrace --count 4 */
const SO_BT4 = `* thread #1: tid = 15339, name = 'stack-overflow', stop reason = signal SIGSEGV
  * frame #0: 0x0000556c4245f171 stack-overflow\`parse_value(parser=<unavailable>) at /work/main/tests/fixtures/programs/stack-overflow.c:16:1
    frame #1: 0x0000556c4245f25f stack-overflow\`parse_value(parser=0x00007ffcba892340) at /work/main/tests/fixtures/programs/stack-overflow.c:32:17
    frame #2: 0x0000556c4245f25f stack-overflow\`parse_value(parser=0x00007ffcba892340) at /work/main/tests/fixtures/programs/stack-overflow.c:32:17
    frame #3: 0x0000556c4245f25f stack-overflow\`parse_value(parser=0x00007ffcba892340) at /work/main/tests/fixtures/programs/stack-overflow.c:32:17`;
/** thread backtrace (excerpt: the first and the last frames) */
const SO_BT_ALL = `* thread #1: tid = 15339, name = 'stack-overflow', stop reason = signal SIGSEGV
  * frame #0: 0x0000556c4245f171 stack-overflow\`parse_value(parser=<unavailable>) at /work/main/tests/fixtures/programs/stack-overflow.c:16:1
    frame #1: 0x0000556c4245f25f stack-overflow\`parse_value(parser=0x00007ffcba892340) at /work/main/tests/fixtures/programs/stack-overflow.c:32:17
    frame #130943: 0x0000556c4245f25f stack-overflow\`parse_value(parser=0x00007ffcba892340) at /work/main/tests/fixtures/programs/stack-overflow.c:32:17
    frame #130944: 0x0000556c4245f309 stack-overflow\`parse_request(parser=0x00007ffcba892340) at /work/main/tests/fixtures/programs/stack-overflow.c:50:12
    frame #130945: 0x0000556c4245f3aa stack-overflow\`main at /work/main/tests/fixtures/programs/stack-overflow.c:62:5
    frame #130946: 0x00007f43fffb424a libc.so.6\`__libc_start_call_main(main=(stack-overflow\`main at stack-overflow.c:54:1), argc=1, argv=0x00007ffcba892478) at sysdeps/nptl/libc_start_call_main.h:58:16
    frame #130947: 0x00007f43fffb4305 libc.so.6\`__libc_start_main_impl(main=(stack-overflow\`main at stack-overflow.c:54:1), argc=1, argv=0x00007ffcba892478, init=<unavailable>, fini=<unavailable>, rtld_fini=<unavailable>, stack_end=0x00007ffcba892468) at csu/libc-start.c:360:3
    frame #130948: 0x0000556c4245f0a1 stack-overflow\`_start + 33`;

// C++: uncaught-exception (std::runtime_error thrown from read_field) and cpp-null-deref (a method called on nullptr)
/** thread list */
const UE_THREADS = `Process 15496 stopped
* thread #1: tid = 15496, 0x00007fdd1eea8eec libc.so.6\`__pthread_kill_implementation(threadid=<unavailable>, signo=6, no_tid=<unavailable>) at nptl/pthread_kill.c:44:76, name = 'uncaught-except', stop reason = signal SIGABRT`;
/** thread backtrace --count 11 */
const UE_BT = `* thread #1: tid = 15496, name = 'uncaught-except', stop reason = signal SIGABRT
  * frame #0: 0x00007fdd1eea8eec libc.so.6\`__pthread_kill_implementation(threadid=<unavailable>, signo=6, no_tid=<unavailable>) at nptl/pthread_kill.c:44:76
    frame #1: 0x00007fdd1ee59fb2 libc.so.6\`__GI_raise(sig=6) at sysdeps/posix/raise.c:26:13
    frame #2: 0x00007fdd1ee44472 libc.so.6\`__GI_abort at stdlib/abort.c:79:7
    frame #3: 0x00007fdd1f09d919 libstdc++.so.6\`___lldb_unnamed_symbol7233 + 96
    frame #4: 0x00007fdd1f0a8e1a libstdc++.so.6\`___lldb_unnamed_symbol7645 + 10
    frame #5: 0x00007fdd1f0a8e85 libstdc++.so.6\`std::terminate() + 21
    frame #6: 0x00007fdd1f0a90d8 libstdc++.so.6\`__cxa_throw + 72
    frame #7: 0x00005647da9fd552 uncaught-exception\`read_field(manifest=size=1, field="version") at /work/main/tests/fixtures/programs/uncaught-exception.cpp:14:77
    frame #8: 0x00005647da9fd5eb uncaught-exception\`parse_version(manifest=size=1) at /work/main/tests/fixtures/programs/uncaught-exception.cpp:20:44
    frame #9: 0x00005647da9fd6c8 uncaught-exception\`load_plugin(name="metrics", manifest=size=1) at /work/main/tests/fixtures/programs/uncaught-exception.cpp:26:30
    frame #10: 0x00005647da9fd958 uncaught-exception\`main at /work/main/tests/fixtures/programs/uncaught-exception.cpp:33:16`;
/** [frame 7] disassemble --bytes --frame (excerpt) */
const UE_DIS = `uncaught-exception\`::read_field(const Manifest &, const std::string &):
    0x5647da9fd4c1 <+72>:  e8 a8 0c 00 00        callq  0x316e                    ; std::operator== at stl_tree.h:396:7
    0x5647da9fd4c6 <+77>:  84 c0                 testb  %al, %al
    0x5647da9fd4c8 <+79>:  0f 84 84 00 00 00     je     0x2552                    ; <+217> at uncaught-exception.cpp:15:14
    0x5647da9fd4ce <+85>:  bf 10 00 00 00        movl   $0x10, %edi
    0x5647da9fd4d3 <+90>:  e8 08 fc ff ff        callq  0x20e0                    ; symbol stub for: __cxa_allocate_exception
    0x5647da9fd536 <+189>: 48 8b 05 6b 5a 00 00  movq   0x5a6b(%rip), %rax
    0x5647da9fd53d <+196>: 48 89 c2              movq   %rax, %rdx
    0x5647da9fd540 <+199>: 48 8d 05 39 58 00 00  leaq   0x5839(%rip), %rax        ; _ZTISt13runtime_error@GLIBCXX_3.4
    0x5647da9fd547 <+206>: 48 89 c6              movq   %rax, %rsi
    0x5647da9fd54a <+209>: 48 89 df              movq   %rbx, %rdi
    0x5647da9fd54d <+212>: e8 9e fd ff ff        callq  0x22f0                    ; symbol stub for: __cxa_throw
->  0x5647da9fd552 <+217>: 48 8d 45 a0           leaq   -0x60(%rbp), %rax
    0x5647da9fd5a1 <+296>: 41 5c                 popq   %r12
    0x5647da9fd5a3 <+298>: 5d                    popq   %rbp
    0x5647da9fd5a4 <+299>: c3                    retq   `;
/** [frame 7] frame variable --no-locals */
const UE_ARGS = `(const Manifest &) manifest = size=1: {
  [0] = (first = "name", second = "metrics")
}
(const std::string &) field = "version": {
  _M_dataplus = (_M_p = "version")
  _M_string_length = 7
   = (_M_local_buf = "version\\0S\\0\\xa0\\xdaGV", _M_allocated_capacity = 31084746137298294)
}`;
/** [frame 7] expression -- field */
const UE_E_FIELD = `(const std::string) $0 = "version"`;
/** thread list */
const CN_THREADS = `Process 14134 stopped
* thread #1: tid = 14134, 0x00005567b391f73c cpp-null-deref\`Session::idle_seconds(this=0x0000000000000000, now=1400) const at /work/main/tests/fixtures/programs/cpp-null-deref.cpp:11:54, name = 'cpp-null-deref', stop reason = signal SIGSEGV`;
/** frame variable */
const CN_LOCALS = `(const Session *const) this = nullptr
(long) now = 1400`;
/** expression -- this */
const CN_E_THIS = `(Session *) $0 = nullptr`;
/** disassemble --bytes --pc --count 3 */
const CN_INSNS = `cpp-null-deref\`Session::idle_seconds:
->  0x5567b391f73c <+16>: 48 8b 40 20  movq   0x20(%rax), %rax
    0x5567b391f740 <+20>: 48 8b 55 f0  movq   -0x10(%rbp), %rdx
    0x5567b391f744 <+24>: 48 29 c2     subq   %rax, %rdx`;

// rust-panic: Option::expect on None
/** thread backtrace --count 17 (excerpt: the thread and frames 11-16) */
const RP_BT = `* thread #1: tid = 15288, name = 'rust-panic', stop reason = signal SIGABRT
    frame #11: 0x000055e40b43a0cd rust-panic\`__rustc::rust_begin_unwind at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
    frame #12: 0x000055e40b45f13c rust-panic\`core::panicking::panic_fmt at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
    frame #13: 0x000055e40b45ee94 rust-panic\`core::option::expect_failed [inlined] core::panicking::panic_display::<&str> at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:259:5
    frame #14: 0x000055e40b45ee74 rust-panic\`core::option::expect_failed at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/option.rs:2245:5
    frame #15: 0x000055e40b4220a1 rust-panic\`core::option::Option$LT$T$GT$::expect::h1e7ef3c73b1885bc(self=Option<u32> @ 0x00007ffeceaa8128, msg=(data_ptr = "", length = 48)) at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/option.rs:971:21
    frame #16: 0x000055e40b420864 rust-panic\`rust_panic::price_of::hdf0c011c6523e2b4(catalog=0x00007ffeceaa8388, sku=(data_ptr = "", length = 4)) at /work/main/tests/fixtures/programs/rust-panic.rs:20:11`;

// dangling-callback: a subscriber's callback called after the subscriber was freed
/** [frame 1] disassemble --bytes --frame (excerpt) */
const DC_DIS_MAIN = `dangling-callback\`main:
    0x55e77eac3205 <+0>:   55                    pushq  %rbp
    0x55e77eac3206 <+1>:   48 89 e5              movq   %rsp, %rbp
    0x55e77eac3209 <+4>:   48 83 ec 40           subq   $0x40, %rsp
    0x55e77eac320d <+8>:   66 0f ef c0           pxor   %xmm0, %xmm0
    0x55e77eac3211 <+12>:  0f 29 45 c0           movaps %xmm0, -0x40(%rbp)
    0x55e77eac3215 <+16>:  0f 29 45 d0           movaps %xmm0, -0x30(%rbp)
    0x55e77eac3219 <+20>:  66 0f d6 45 e0        movq   %xmm0, -0x20(%rbp)
    0x55e77eac321e <+25>:  c7 45 fc 00 00 00 00  movl   $0x0, -0x4(%rbp)
    0x55e77eac3225 <+32>:  eb 43                 jmp    0x126a                    ; <+101> at dangling-callback.c:34:23
    0x55e77eac3243 <+62>:  48 8b 45 f0           movq   -0x10(%rbp), %rax
    0x55e77eac3247 <+66>:  48 8d 15 0b ff ff ff  leaq   -0xf5(%rip), %rdx         ; print_event at dangling-callback.c:18:44
    0x55e77eac324e <+73>:  48 89 50 08           movq   %rdx, 0x8(%rax)
    0x55e77eac326a <+101>: 83 7d fc 01           cmpl   $0x1, -0x4(%rbp)
    0x55e77eac326e <+105>: 7e b7                 jle    0x1227                    ; <+34> at dangling-callback.c:35:32
    0x55e77eac327c <+119>: e8 2d ff ff ff        callq  0x11ae                    ; publish at dangling-callback.c:26:1
->  0x55e77eac32a3 <+158>: b8 00 00 00 00        movl   $0x0, %eax
    0x55e77eac32a8 <+163>: c9                    leave  
    0x55e77eac32a9 <+164>: c3                    retq   `;
/** [frame 1] frame variable --no-args */
const DC_LOCALS_MAIN = `(bus) bus = {
  subscribers = {
    [0] = 0x000055e7969282a0
    [1] = 0x000055e7969282d0
    [2] = NULL
    [3] = NULL
  }
  count = 2
}`;
/** expression -- *bus->subscribers[1] */
const DC_E_SUB = `(subscriber) $0 = {
  id = 1
  on_event = 0x000055e77eac3159 (dangling-callback\`print_event at dangling-callback.c:18:44)
  topic = {
    [0] = '\\0'
    [1] = '\\0'
    [2] = '\\0'
    [3] = '\\0'
    [4] = '\\0'
    [5] = '\\0'
    [6] = '\\0'
    [7] = '\\0'
    [8] = '\\0'
    [9] = '\\0'
    [10] = '\\0'
    [11] = '\\0'
    [12] = '\\0'
    [13] = '\\0'
    [14] = '\\0'
    [15] = '\\0'
  }
}`;
/** expression -- bus->subscribers[1]->on_event */
const DC_E_FN = `(void (*)(int, int)) $0 = 0x000055e77eac3159 (dangling-callback\`print_event at dangling-callback.c:18:44)`;
/** expression -- bus->subscribers */
const DC_E_ARR = `(subscriber *[4]) $0 = {
  [0] = 0x000055e7969282a0
  [1] = 0x000055e7969282d0
  [2] = NULL
  [3] = NULL
}`;

// abort-msg: free() of a pointer malloc never returned
/** thread list */
const AM_THREADS = `Process 13930 stopped
* thread #1: tid = 13930, 0x00007f873ebd5eec libc.so.6\`__pthread_kill_implementation(threadid=<unavailable>, signo=6, no_tid=<unavailable>) at nptl/pthread_kill.c:44:76, name = 'abort-msg', stop reason = signal SIGABRT`;
/** memory read --format s --count 1 -- "*(char **)&__abort_msg + 4" */
const AM_MSG = `0x7f873ed37004: "free(): invalid pointer\\n"`;

// A scratch program (gcc -g -O0) for the value shapes no fixture has, crashed in
// `crash(&s, where, 2)` by a write through a NULL int *:
//   struct point { int x; int y; };
//   union word { unsigned int u; float f; unsigned char bytes[4]; };
//   enum color { RED, GREEN = 5, BLUE };
//   struct shape { const char *name; char label[8]; int sides[3]; struct point origin; union word tag;
//                  enum color color; bool filled; double scale; int (*area)(const struct shape *); struct shape *next; };
//   static void crash(struct shape *shape, struct point where, int count)
//   { struct point corners[2] = { { 1, 2 }, { -3, 4 } }; char letter = 'q'; int *nothing = NULL; *nothing = ...; }
// with s = { strdup("square \"one\"\tok"), "box", { 3, 4, -5 }, { 7, -8 }, { 0x41424344 }, BLUE, true, 2.5, area, NULL }.
/** frame variable --no-args */
const SH_LOCALS = `(point[2]) corners = {
  [0] = (x = 1, y = 2)
  [1] = (x = -3, y = 4)
}
(char) letter = 'q'
(int *) nothing = 0x0000000000000000`;
/** frame variable --no-locals */
const SH_ARGS = `(shape *) shape = 0x00007ffec6247b60
(point) where = (x = 10, y = 20)
(int) count = 2`;
/** frame variable *shape */
const SH_VAR_SHAPE = `(shape) *shape = {
  name = 0x000055a0dcef82a0 "square \\"one\\"\\tok"
  label = "box"
  sides = ([0] = 3, [1] = 4, [2] = -5)
  origin = (x = 7, y = -8)
  tag = (u = 1094861636, f = 12.1414223, bytes = "DCBA")
  color = BLUE
  filled = true
  scale = 2.5
  area = 0x000055a0a9b47149 (shapes\`area at shapes.c:21:40)
  next = NULL
}`;
/** expression -- *shape */
const SH_E_SHAPE = `(shape) $0 = {
  name = 0x000055a0dcef82a0 "square \\"one\\"\\tok"
  label = {
    [0] = 'b'
    [1] = 'o'
    [2] = 'x'
    [3] = '\\0'
    [4] = '\\0'
    [5] = '\\0'
    [6] = '\\0'
    [7] = '\\0'
  }
  sides = ([0] = 3, [1] = 4, [2] = -5)
  origin = (x = 7, y = -8)
  tag = (u = 1094861636, f = 12.1414223, bytes = unsigned char[4] @ 0x0000563d195a8bc4)
  color = BLUE
  filled = true
  scale = 2.5
  area = 0x000055a0a9b47149 (shapes\`area at shapes.c:21:40)
  next = NULL
}`;
/** expression -- shape->origin */
const SH_E_ORIGIN = `(point) $0 = (x = 7, y = -8)`;
/** expression -- shape->sides */
const SH_E_SIDES = `(int[3]) $0 = ([0] = 3, [1] = 4, [2] = -5)`;
/** expression --format x -- shape->sides */
const SH_E_SIDES_HEX = `(int[3]) $0 = ([0] = 0x00000003, [1] = 0x00000004, [2] = 0xfffffffb)`;
/** expression -- shape->label */
const SH_E_LABEL = `(char[8]) $0 = "box"`;
/** expression -- shape->name */
const SH_E_NAME = `(const char *) $0 = 0x000055a0dcef82a0 "square \\"one\\"\\tok"`;
/** expression -- shape->area */
const SH_E_AREA = `(int (*)(const shape *)) $0 = 0x000055a0a9b47149 (shapes\`area at shapes.c:21:40)`;
/** expression -- shape->next */
const SH_E_NEXT = `(shape *) $0 = NULL`;
/** expression -- corners */
const SH_E_CORNERS = `(point[2]) $0 = {
  [0] = (x = 1, y = 2)
  [1] = (x = -3, y = 4)
}`;
/** expression -- letter */
const SH_E_LETTER = `(char) $0 = 'q'`;
/** expression -- shape->color */
const SH_E_COLOR = `(color) $0 = BLUE`;
/** expression -- shape->scale */
const SH_E_SCALE = `(double) $0 = 2.5`;
/** expression -- shape->tag */
const SH_E_TAG = `(word) $0 = (u = 1094861636, f = 12.1414223, bytes = unsigned char[4] @ 0x00005629377570b0)`;
/** disassemble --bytes --frame */
const SH_DIS = `shapes\`crash:
    0x55a0a9b47164 <+0>:  55                       pushq  %rbp
    0x55a0a9b47165 <+1>:  48 89 e5                 movq   %rsp, %rbp
    0x55a0a9b47168 <+4>:  48 89 7d d8              movq   %rdi, -0x28(%rbp)
    0x55a0a9b4716c <+8>:  48 89 75 d0              movq   %rsi, -0x30(%rbp)
    0x55a0a9b47170 <+12>: 89 55 cc                 movl   %edx, -0x34(%rbp)
    0x55a0a9b47173 <+15>: c7 45 e0 01 00 00 00     movl   $0x1, -0x20(%rbp)
    0x55a0a9b4717a <+22>: c7 45 e4 02 00 00 00     movl   $0x2, -0x1c(%rbp)
    0x55a0a9b47181 <+29>: c7 45 e8 fd ff ff ff     movl   $0xfffffffd, -0x18(%rbp)  ; imm = 0xFFFFFFFD 
    0x55a0a9b47188 <+36>: c7 45 ec 04 00 00 00     movl   $0x4, -0x14(%rbp)
    0x55a0a9b4718f <+43>: c6 45 ff 71              movb   $0x71, -0x1(%rbp)
    0x55a0a9b47193 <+47>: 48 c7 45 f0 00 00 00 00  movq   $0x0, -0x10(%rbp)
    0x55a0a9b4719b <+55>: 48 8b 45 d8              movq   -0x28(%rbp), %rax
    0x55a0a9b4719f <+59>: 8b 50 10                 movl   0x10(%rax), %edx
    0x55a0a9b471a2 <+62>: 8b 45 d0                 movl   -0x30(%rbp), %eax
    0x55a0a9b471a5 <+65>: 01 c2                    addl   %eax, %edx
    0x55a0a9b471a7 <+67>: 8b 45 cc                 movl   -0x34(%rbp), %eax
    0x55a0a9b471aa <+70>: 01 c2                    addl   %eax, %edx
    0x55a0a9b471ac <+72>: 48 8b 45 f0              movq   -0x10(%rbp), %rax
->  0x55a0a9b471b0 <+76>: 89 10                    movl   %edx, (%rax)
    0x55a0a9b471b2 <+78>: 90                       nop    
    0x55a0a9b471b3 <+79>: 5d                       popq   %rbp
    0x55a0a9b471b4 <+80>: c3                       retq   `;
/** memory read --size 8 --format x --count 4 shape */
const SH_MEM = `0x7ffec6247b60: 0x000055a0dcef82a0 0x0000000000786f62
0x7ffec6247b70: 0x0000000400000003 0x00000007fffffffb`;
/** memory read --size 8 --format x --count 5 $rsp */
const SH_MEM_RSP = `0x7ffec6247b40: 0x00007ffec6247bb0 0x000055a0a9b4726f
0x7ffec6247b50: 0x0000000000000000 0x000000140000000a
0x7ffec6247b60: 0x000055a0dcef82a0`;
/** memory read --format s --count 1 shape->name */
const SH_STRING = `0x55a0dcef82a0: "square "one"\\tok"`;
/** image lookup --address "*(void **)&shape->area" */
const SH_LOOKUP_IND = `      Address: shapes[0x0000000000001149] (shapes.PT_LOAD[1]..text + 233)
      Summary: shapes\`area at shapes.c:21:40`;

// A scratch program whose heap block holds consecutive strings: `say "hi"`, `back\slash`, `tab<TAB>new<LF>line`,
// `caf<C3 A9> <05> end` and 300 x's.
/** memory read --format s --count 5 block */
const ST_STRINGS = `0x55b583bd22a0: "say "hi""
0x55b583bd22a9: "back\\slash"
0x55b583bd22b4: "tab\\tnew\\nline"
0x55b583bd22c1: "caf\\xffffffc3\\xffffffa9 \\x05 end"
0x55b583bd22cd: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"`;

/** The instruction at `address` in a listing, which must be there. */
function at(listing: string, address: string) {
  const found = read({ kind: "disassemble" }, listing).instructions.find((instruction) => instruction.address === address);
  if (!found) throw new Error(`no instruction at ${address}`);
  return found;
}

/** Each probe renders as its command (the probe is the message of a failing expectation). */
function expectRenders(cases: Array<[Probe, string]>): void {
  for (const [probe, command] of cases) expect(render(probe), JSON.stringify(probe)).toBe(command);
}

describe("lldb renders each probe as the command a user would type", () => {
  it("asks the thread list for the threads and for the signal (lldb has no `$_siginfo` or `$_exitsignal`)", () => {
    expectRenders([
      [{ kind: "threads" }, "thread list"],
      [{ kind: "exit-signal" }, "thread list"],
      [{ kind: "signal-info" }, "thread list"],
    ]);
  });
  it("asks a stack for one frame more than wanted, which says whether it goes on; a thread by lldb's own argument", () => {
    expectRenders([
      [probes.backtrace(40), "thread backtrace --count 41"],
      [{ kind: "backtrace", limit: 40, outermost: true }, "thread backtrace"],
      [probes.backtrace(12, { thread: 3 }), "thread backtrace --count 13 3"],
      [{ kind: "thread-backtraces", threads: "all", limit: 64 }, "thread backtrace --count 64 all"],
      [{ kind: "thread-backtraces", threads: [2, 3] }, "thread backtrace 2 3"],
    ]);
  });
  it("places registers and expressions with the `[thread T, frame F]` prefix, and no prefix where the debugger stands", () => {
    expectRenders([
      [probes.registers(), "register read"],
      [{ kind: "registers", names: ["rip", "rsp"], frame: 1 }, "[frame 1] register read rip rsp"],
      [probes.register("rdi", { thread: 4 }), "[thread 4] register read rdi"],
      [probes.evaluate("session->client"), "expression -- session->client"],
      [probes.evaluate("*node", { thread: 2, frame: 3 }), "[thread 2, frame 3] expression -- *node"],
      [probes.evaluate("flags", {}, "hex"), "expression --format x -- flags"],
      [probes.evaluate("x", { thread: null, frame: 0 }), "expression -- x"],
    ]);
  });
  it("on a minidump reads a variable path with frame variable, which runs nothing, and anything else as an expression", () => {
    const renders: [Probe, string][] = [
      [probes.evaluate("session->client"), "frame variable session->client"],
      [probes.evaluate("*node", { thread: 2, frame: 3 }), "[thread 2, frame 3] frame variable *node"],
      [probes.evaluate("flags", {}, "hex"), "frame variable --format x flags"],
      [probes.evaluate("&table->slots[3].owner"), "frame variable &table->slots[3].owner"],
      [probes.evaluate("sizeof session->name"), "expression -- sizeof session->name"],
      [probes.evaluate("*(int *)(0x7ffe1000 + 8)", { frame: 1 }), "[frame 1] expression -- *(int *)(0x7ffe1000 + 8)"],
      [probes.evaluate("a[i]"), "expression -- a[i]"],
    ];
    for (const [probe, command] of renders) expect(lldbMinidumpVocabulary.render(probe)).toBe(command);
  });
  it("asks for a frame's CFA as its caller's stack pointer", () => {
    expectRenders([
      [probes.frameInfo(2), "[frame 3] register read sp"],
      [{ kind: "frame-info", frame: 0, thread: 2 }, "[thread 2, frame 1] register read sp"],
    ]);
  });
  it("asks `frame variable` for the locals without the arguments, and the other way round", () => {
    expectRenders([
      [probes.locals({ frame: 1 }), "[frame 1] frame variable --no-args"],
      [probes.locals({ thread: null, frame: 0 }), "frame variable --no-args"],
      [probes.arguments(), "frame variable --no-locals"],
    ]);
  });
  it("disassembles with the encoding, the function around a return address from its last call byte", () => {
    expectRenders([
      [probes.disassemble(), "disassemble --bytes --frame"],
      [{ kind: "disassemble", address: "0x401136" }, "disassemble --bytes --address 0x401136"],
      [{ kind: "disassemble", address: "0x401136", before: 64 }, "disassemble --bytes --address 0x401136-1"],
      [{ kind: "instructions", count: 1 }, "disassemble --bytes --pc --count 1"],
      [{ kind: "instructions", count: 6, address: "0x401130", frame: 2 }, "[frame 2] disassemble --bytes --start-address 0x401130 --count 6"],
    ]);
  });
  it("reads memory as 8-byte words or C strings, quoting an address expression with spaces", () => {
    expectRenders([
      [probes.memory("0x7ffe0000", 4), "memory read --size 8 --format x --count 4 0x7ffe0000"],
      [probes.memory("$rsp + 8", 2), 'memory read --size 8 --format x --count 2 "$rsp + 8"'],
      [probes.string("0x402010"), "memory read --format s --count 1 0x402010"],
      [{ kind: "strings", address: "*(char **)0x00007ffe3f157e58", count: 3 }, 'memory read --format s --count 3 "*(char **)0x00007ffe3f157e58"'],
      [{ kind: "abort-message" }, 'memory read --format s --count 1 -- "*(char **)&__abort_msg + 4"'],
    ]);
  });
  it("looks up symbols, directly or through a pointer, and lists source lines", () => {
    expectRenders([
      [probes.symbol("0x4010"), "image lookup --address 0x4010 --verbose"],
      [probes.symbol("0x4010", true), 'image lookup --address "*(void **)0x4010" --verbose'],
      [probes.source("server.c", 20, 24), "source list --file server.c --line 20 --count 5"],
      [probes.source("server.c", 20), "source list --file server.c --line 20 --count 1"],
      [{ kind: "source-line", address: "0x1186" }, "image lookup --address 0x1186 --verbose"],
    ]);
  });
  it("names a variable a PE's section symbol stands in for, from the verbose lookup's Variable line", () => {
    const verbose = [
      "      Address: deadlock-globals.exe[0x000000014000d048] (deadlock-globals.exe..bss + 72)",
      "      Summary: deadlock-globals.exe`.bss + 8",
      '       Symbol: id = {0xffffffff}, range = [0x000000014000d040-0x000000014000d080), name=".bss"',
      '     Variable: id = {0x000032ed}, kind = static, name = "config_lock"',
    ].join("\n");
    expect(read({ kind: "symbol", address: "0x14000d048" }, verbose)).toMatchObject({ symbol: "config_lock", offset: 8, section: ".bss" });
  });
  it("reads a source line's whole path from the verbose lookup's line entry, the summary's file name when there is none", () => {
    const verbose = [
      "      Address: abort[0x0000563ec44b3300] (abort..module_image + 4864)",
      "      Summary: abort`main + 77 at abort.c:46",
      '       Module: file = "/Applications/abort.app/Contents/MacOS/abort", arch = "x86_64"',
      "    LineEntry: [0x0000563ec44b32e6-0x0000563ec44b3302): /work/src/abort.c:46",
    ].join("\n");
    expect(read({ kind: "source-line", address: "0x563ec44b3300" }, verbose)).toEqual({ file: "/work/src/abort.c", line: 46 });
    expect(read({ kind: "source-line", address: "0x563ec44b3300" }, "      Summary: abort`main + 77 at abort.c:46")).toEqual({ file: "abort.c", line: 46 });
  });
  it("gives a symbol's source file by its whole path, the line entry's, where the summary names the file alone", () => {
    const verbose = [
      "      Address: format-check.exe[0x000000014000160a] (format-check.exe..text + 1546)",
      "      Summary: format-check.exe`report_status + 48 at format-check.c:35:5",
      "    LineEntry: [0x00000001400015e8-0x000000014000160b): /work/src/format-check.c:35:5",
      '       Symbol: id = {0xffffffff}, range = [0x00000001400015da-0x0000000140001612), name="report_status"',
    ].join("\n");
    expect(read({ kind: "symbol", address: "0x14000160a" }, verbose)).toMatchObject({ symbol: "report_status", offset: 48, file: "/work/src/format-check.c", line: 35 });
  });
  it("names the function inlined at an address, and the calls it was inlined from, from a .sym's INLINE records as LLDB read them", () => {
    // image lookup of a return address in an -O2 build's main, its .sym written with INLINE records
    const verbose = [
      "      Address: null-arg[0x000055f9328ed0e0] (null-arg..module_image + 4320)",
      "      Summary: null-arg`main + 80 [inlined] log_line_length at null-arg.c:16",
      "               null-arg`main + 74 [inlined] log_request + 63 at null-arg.c:22",
      "               null-arg`main + 18 at null-arg.c:35",
      '       Module: file = "/Applications/null-arg.app/Contents/MacOS/null-arg", arch = "x86_64"',
      '     Function: id = {0x00000000}, name = "main", range = [0x000055f9328ed090-0x000055f9328ed130)',
      "    LineEntry: [0x000055f9328ed0e1-0x000055f9328ed0e8): /work/src/null-arg.c:16",
      '       Symbol: id = {0x00000000}, range = [0x000055f9328ed000-0x000055f9328ed130), name="_init"',
    ].join("\n");
    expect(read({ kind: "symbol", address: "0x55f9328ed0e0" }, verbose)).toEqual({
      symbol: "main",
      offset: 80,
      section: null,
      module: "null-arg",
      file: "/work/src/null-arg.c",
      line: 16,
      inlined: [
        { function: "log_line_length", file: "/work/src/null-arg.c", line: 16 },
        { function: "log_request", file: "/work/src/null-arg.c", line: 22 },
        { function: "main", file: "/work/src/null-arg.c", line: 35 },
      ],
    });
    expect(read({ kind: "symbol", address: "0x55f9328ed0e7" }, verbose.replace("log_line_length at", "log_line_length + 6 at"))).toMatchObject({ symbol: "main", offset: 80 });
  });
  it("lists the modules, their sections and the memory regions", () => {
    expectRenders([
      [{ kind: "shared-libraries" }, "image list"],
      [{ kind: "sections" }, "image dump sections"],
      [{ kind: "mappings" }, "memory region --all"],
    ]);
  });
  it("asks for the images for .NET's managed side: dumpdbg's LLDB loads no SOS plugin to read it", () => {
    expectRenders([
      [{ kind: "managed-threads" }, "image list"],
      [{ kind: "managed-stack", thread: 3 }, "image list"],
      [{ kind: "managed-stacks" }, "image list"],
      [{ kind: "managed-exception" }, "image list"],
      [{ kind: "managed-locks" }, "image list"],
      [{ kind: "managed-heap" }, "image list"],
    ]);
  });
  it("selects with lldb's select commands, and passes a free-form command through", () => {
    expectRenders([
      [{ kind: "select", thread: 2 }, "thread select 2"],
      [{ kind: "select", frame: 0 }, "frame select 0"],
      [probes.command("type lookup session"), "type lookup session"],
    ]);
  });
});

describe("threads and stacks, read from lldb's frame and thread lines", () => {
  it("reads the thread list: the selected thread, its tid, name and innermost frame with its arguments", () => {
    expect(read({ kind: "threads" }, ND_THREADS)).toEqual([
      {
        id: 1,
        lwp: 15014,
        name: "null-deref",
        current: true,
        frame: { address: "0x562c133cd1e7", function: "send_to_client", args: 'session=0x0000562c3569c2f0, message=""', file: "/work/main/tests/fixtures/programs/null-deref.c", line: 27, from: null },
      },
    ]);
  });

  it("reads every thread of a multi-threaded dump; a thread without a name has none", () => {
    const threads = read({ kind: "threads" }, DL_THREADS);
    expect(threads.map((t) => [t.id, t.lwp, t.name, t.current])).toEqual([
      [1, 14236, "deadlock", true],
      [2, 14237, null, false],
      [3, 14238, null, false],
    ]);
    expect(threads[1]?.frame).toMatchObject({ address: "0x7feeffbeb12b", function: "__GI___lll_lock_wait", args: "", file: "sysdeps/nptl/futex-internal.h", line: 146 });
  });

  it("takes the selected thread from the mark, not from the order of the tids", () => {
    const threads = read({ kind: "threads" }, TC_THREADS);
    expect(threads.filter((t) => t.current).map((t) => [t.id, t.lwp])).toEqual([[1, 15444]]);
    expect(threads.map((t) => t.lwp)).toEqual([15444, 15441, 15442, 15443, 15445]);
  });

  it("reads a thread stopped at pc 0: an address and nothing else", () => {
    expect(read({ kind: "threads" }, BJ_THREADS)).toEqual([
      { id: 1, lwp: 14032, name: "bad-jump", current: true, frame: { address: "0x0", function: null, args: "", file: null, line: null, from: null } },
    ]);
  });

  it("separates a C++ method's arguments from its name when a qualifier follows them", () => {
    expect(read({ kind: "threads" }, CN_THREADS)[0]?.frame).toMatchObject({
      function: "Session::idle_seconds",
      args: "this=0x0000000000000000, now=1400",
      file: "/work/main/tests/fixtures/programs/cpp-null-deref.cpp",
      line: 11,
    });
  });

  it("reads a backtrace asked one frame long: a stack that ends within the limit is whole", () => {
    const { frames, truncated } = read(probes.backtrace(40), ND_BT);
    expect(truncated).toBe(false);
    expect(frames.map((f) => [f.level, f.function, f.line])).toEqual([
      [0, "send_to_client", 27],
      [1, "broadcast", 35],
      [2, "main", 50],
      [3, "__libc_start_call_main", 58],
      [4, "__libc_start_main_impl", 360],
      [5, "_start", null],
    ]);
    expect(frames[1]).toEqual({ level: 1, address: "0x562c133cd25e", function: "broadcast", args: 'sessions=0x00007ffe3f157d10, count=3, message=""', file: "/work/main/tests/fixtures/programs/null-deref.c", line: 35, from: null });
  });

  it("does not take the ` at ` inside a function-pointer argument for the frame's location", () => {
    const frame = read(probes.backtrace(40), ND_BT).frames[3];
    expect(frame).toMatchObject({ function: "__libc_start_call_main", args: "main=(null-deref`main at null-deref.c:39:1), argc=1, argv=0x00007ffe3f157e58", file: "sysdeps/nptl/libc_start_call_main.h", line: 58 });
  });

  it("names the module of a frame without line information, and reads the function without its offset", () => {
    expect(read(probes.backtrace(40), ND_BT).frames[5]).toEqual({ level: 5, address: "0x562c133cd0b1", function: "_start", args: "", file: null, line: null, from: "null-deref" });
  });

  it("says a stack goes on when the extra frame came", () => {
    const { frames, truncated } = read(probes.backtrace(3), SO_BT4);
    expect(truncated).toBe(true);
    expect(frames.map((f) => [f.level, f.function, f.args])).toEqual([
      [0, "parse_value", "parser=<unavailable>"],
      [1, "parse_value", "parser=0x00007ffcba892340"],
      [2, "parse_value", "parser=0x00007ffcba892340"],
    ]);
  });

  it("reads the outermost frames of a whole stack", () => {
    const { frames, truncated } = read({ kind: "backtrace", limit: 3, outermost: true }, SO_BT_ALL);
    expect(truncated).toBe(false);
    expect(frames.map((f) => [f.level, f.function, f.from])).toEqual([
      [130946, "__libc_start_call_main", null],
      [130947, "__libc_start_main_impl", null],
      [130948, "_start", "stack-overflow"],
    ]);
  });

  it("reads a frame at pc 0, a frame of a stripped library, and a source line without a column", () => {
    expect(read(probes.backtrace(2), BJ_BT).frames[0]).toEqual({ level: 0, address: "0x0", function: null, args: "", file: null, line: null, from: null });
    const cxx = read(probes.backtrace(10), UE_BT);
    expect(cxx.truncated).toBe(true);
    // lldb names a stripped function by its index in the symbol table: no name is known there.
    expect(cxx.frames[3]).toMatchObject({ address: "0x7fdd1f09d919", function: null, from: "libstdc++.so.6", file: null });
    expect(cxx.frames[5]).toMatchObject({ function: "std::terminate()", from: "libstdc++.so.6" });
    expect(cxx.frames[7]).toMatchObject({ function: "read_field", args: 'manifest=size=1, field="version"', line: 14 });
    expect(read(probes.backtrace(0), TC_BT).frames[3]).toMatchObject({ function: "__clone3", file: "sysdeps/unix/sysv/linux/x86_64/clone3.S", line: 81 });
  });

  it("names an inlined frame by the inlined function, and keeps Rust's aggregate arguments whole", () => {
    const frames = read(probes.backtrace(40), RP_BT).frames;
    expect(frames.map((f) => f.level)).toEqual([11, 12, 13, 14, 15, 16]);
    expect(frames[2]).toMatchObject({ level: 13, address: "0x55e40b45ee94", function: "core::panicking::panic_display::<&str>", line: 259 });
    expect(frames[3]).toMatchObject({ level: 14, function: "core::option::expect_failed", line: 2245 });
    expect(frames[4]).toMatchObject({ function: "core::option::Option$LT$T$GT$::expect::h1e7ef3c73b1885bc", args: 'self=Option<u32> @ 0x00007ffeceaa8128, msg=(data_ptr = "", length = 48)' });
    expect(frames[5]).toMatchObject({ function: "rust_panic::price_of::hdf0c011c6523e2b4", file: "/work/main/tests/fixtures/programs/rust-panic.rs", line: 20 });
  });

  it("reads every thread's stack, each under its own thread", () => {
    const threads = read({ kind: "thread-backtraces", threads: "all", limit: 3 }, DL_ALL);
    expect(threads.map((t) => [t.thread, t.lwp, t.name, t.frames.length])).toEqual([
      [1, 14236, "deadlock", 3],
      [2, 14237, null, 3],
      [3, 14238, null, 3],
    ]);
    expect(threads[2]?.frames[1]).toEqual({ level: 1, address: "0x7feeffbeb115", function: "__GI___lll_lock_wait", args: "futex=0x00007fff1d75f1d0, private=0", file: "nptl/lowlevellock.c", line: 49, from: null });
  });

  it("reads the stacks of listed threads", () => {
    const threads = read({ kind: "thread-backtraces", threads: [2, 3], limit: 2 }, DL_SOME);
    expect(threads.map((t) => [t.thread, t.frames.map((f) => f.address)])).toEqual([
      [2, ["0x7feeffbeb12b", "0x7feeffbeb115"]],
      [3, ["0x7feeffbeb12b", "0x7feeffbeb115"]],
    ]);
  });
});

describe("registers", () => {
  it("reads every register of the selected frame, with its value normalised", () => {
    const registers = read(probes.registers(), ND_REGS);
    expect(registers).toHaveLength(24);
    expect(registers.map((r) => r.name).slice(0, 4)).toEqual(["rax", "rbx", "rcx", "rdx"]);
    expect(registers.find((r) => r.name === "rax")).toEqual({ name: "rax", value: "0x0", natural: "0" });
    expect(registers.find((r) => r.name === "r10")?.value).toBe("0xa5739fc6793553b0");
    expect(registers.find((r) => r.name === "rflags")).toEqual({ name: "rflags", value: "0x10206", natural: "66054" });
  });

  it("names the symbol at a register's value as gdb does, `0x... <symbol+offset>`", () => {
    const natural = Object.fromEntries(read(probes.registers(), ND_REGS).map((r) => [r.name, r.natural]));
    expect(natural.rip).toBe("0x562c133cd1e7 <send_to_client+25>");
    expect(natural.r11).toBe("0x7f9ef7ab7ef0 <__GI___libc_free>");
    expect(natural.r14).toBe("0x562c133cfdd8 <__do_global_dtors_aux_fini_array_entry>");
    expect(natural.r15).toBe("0x7f9ef7c49020 <_rtld_global>");
    // lldb leaves two spaces and no symbol after a pointer into unreadable .rodata.
    expect(natural.rdx).toBe(BigInt("0x562c133ce02e").toString());
  });

  it("reads what lldb knows of an outer frame, and not its note on the others", () => {
    const registers = read(probes.registers({ frame: 1 }), ND_REGS_F1);
    expect(registers.map((r) => r.name)).toEqual(["rbx", "rbp", "rsp", "r12", "r13", "r14", "r15", "rip"]);
    expect(registers.at(-1)?.natural).toBe("0x562c133cd25e <broadcast+66>");
  });

  it("reads named registers in the order asked, and passes over a vector register", () => {
    expect(read({ kind: "registers", names: ["rip", "rsp", "rbp"], frame: 1 }, ND_REG_PICK).map((r) => [r.name, r.value])).toEqual([
      ["rip", "0x562c133cd25e"],
      ["rsp", "0x7ffe3f157cd0"],
      ["rbp", "0x7ffe3f157d00"],
    ]);
    expect(read({ kind: "registers", names: ["xmm0", "rip"] }, ND_REG_XMM).map((r) => r.name)).toEqual(["rip"]);
  });

  it("reads one register's value as an address, and none from an error", () => {
    expect(read(probes.register("sp"), ND_REG_SP)).toBe("0x7ffe3f157c90");
    expect(read(probes.register("eflags"), ND_REG_BAD)).toBeNull();
  });

  it("reads a frame's CFA from its caller's stack pointer: frame 0's rbp + 16 here", () => {
    const cfa = read(probes.frameInfo(0), ND_REG_SP_F1);
    expect(cfa).toBe("0x7ffe3f157cd0");
    const rbp = read(probes.registers(), ND_REGS).find((r) => r.name === "rbp")?.value ?? "0x0";
    expect(BigInt(cfa ?? 0) - BigInt(rbp)).toBe(16n);
  });
});

describe("values, read into gdb's one-line C form", () => {
  it("keeps a pointer's type, drops its zero padding, and reads NULL as 0x0", () => {
    expect(read(probes.evaluate("session"), ND_E_SESSION)).toBe("(session *) 0x562c3569c2f0");
    expect(read(probes.evaluate("session->client"), ND_E_CLIENT)).toBe("(client *) 0x0");
    expect(read(probes.evaluate("shape->next"), SH_E_NEXT)).toBe("(shape *) 0x0");
  });

  it("reads C++'s nullptr as 0x0", () => {
    expect(read(probes.evaluate("this"), CN_E_THIS)).toBe("(Session *) 0x0");
    expect(read(probes.locals(), CN_LOCALS)).toEqual([
      { name: "this", value: "0x0" },
      { name: "now", value: "1400" },
    ]);
  });

  it("joins an aggregate printed over several lines into `{a = 1, b = 0x0}`", () => {
    expect(read(probes.evaluate("*session"), ND_E_STAR)).toBe("{id = 1, client = 0x0}");
  });

  it("prints a string as its address and text, escapes kept", () => {
    expect(read(probes.evaluate("message"), ND_E_MESSAGE)).toBe('0x562c133ce02e ""');
    expect(read(probes.evaluate("shape->name"), SH_E_NAME)).toBe(String.raw`0x55a0dcef82a0 "square \"one\"\tok"`);
  });

  it("reads lldb's one-line aggregates `(x = 1, y = 2)` as `{x = 1, y = 2}`", () => {
    expect(read(probes.evaluate("shape->origin"), SH_E_ORIGIN)).toBe("{x = 7, y = -8}");
    expect(read(probes.arguments(), SH_ARGS)).toEqual([
      { name: "shape", value: "0x7ffec6247b60" },
      { name: "where", value: "{x = 10, y = 20}" },
      { name: "count", value: "2" },
    ]);
  });

  it("drops an array's `[N] = ` labels, in one-line and in multi-line arrays", () => {
    expect(read(probes.evaluate("shape->sides"), SH_E_SIDES)).toBe("{3, 4, -5}");
    expect(read(probes.evaluate("shape->sides", {}, "hex"), SH_E_SIDES_HEX)).toBe("{0x3, 0x4, 0xfffffffb}");
    expect(read(probes.evaluate("bus->subscribers"), DC_E_ARR)).toBe("{0x55e7969282a0, 0x55e7969282d0, 0x0, 0x0}");
    expect(read(probes.evaluate("corners"), SH_E_CORNERS)).toBe("{{x = 1, y = 2}, {x = -3, y = 4}}");
  });

  it("reads a function pointer `0x... (prog`f at f.c:3:1)` as gdb's `0x... <f>`", () => {
    expect(read(probes.evaluate("shape->area"), SH_E_AREA)).toBe("0x55a0a9b47149 <area>");
    expect(read(probes.evaluate("bus->subscribers[1]->on_event"), DC_E_FN)).toBe("0x55e77eac3159 <print_event>");
  });

  it("reads scalars as lldb prints them, and hex without lldb's zero padding", () => {
    expect(read(probes.evaluate("session->id", {}, "hex"), ND_E_HEX)).toBe("0x1");
    expect(read(probes.evaluate("shape->label"), SH_E_LABEL)).toBe('"box"');
    expect(read(probes.evaluate("letter"), SH_E_LETTER)).toBe("113 'q'");
    expect(read(probes.evaluate("shape->color"), SH_E_COLOR)).toBe("BLUE");
    expect(read(probes.evaluate("shape->scale"), SH_E_SCALE)).toBe("2.5");
    expect(read(probes.evaluate("field"), UE_E_FIELD)).toBe('"version"');
  });

  it("reads no value from an expression lldb could not evaluate", () => {
    expect(read(probes.evaluate("session->nope"), ND_E_BAD)).toBeNull();
  });

  it("reads a struct of every shape in one line: char array, int array, nested struct, union, enum, bool, double, function pointer, NULL", () => {
    expect(read(probes.locals(), SH_VAR_SHAPE)).toEqual([
      {
        name: "*shape",
        value: String.raw`{name = 0x55a0dcef82a0 "square \"one\"\tok", label = "box", sides = {3, 4, -5}, origin = {x = 7, y = -8}, tag = {u = 1094861636, f = 12.1414223, bytes = "DCBA"}, color = BLUE, filled = true, scale = 2.5, area = 0x55a0a9b47149 <area>, next = 0x0}`,
      },
    ]);
  });

  it("reads `expression`'s char arrays element by element, its labels dropped", () => {
    // `expression` lists a char array member's elements where `frame variable` gives its text.
    expect(read(probes.evaluate("*bus->subscribers[1]"), DC_E_SUB)).toBe(`{id = 1, on_event = 0x55e77eac3159 <print_event>, topic = {${Array(16).fill(String.raw`'\0'`).join(", ")}}}`);
    expect(read(probes.evaluate("*shape"), SH_E_SHAPE)).toMatch(String.raw`label = {'b', 'o', 'x', '\0', '\0', '\0', '\0', '\0'}, sides = {3, 4, -5}, origin = {x = 7, y = -8}, tag = {u = 1094861636, f = 12.1414223, bytes = unsigned char[4] @ 0x563d195a8bc4}`);
  });

  it("keeps what lldb's one-line summary says of a nested array: its type and an address", () => {
    expect(read(probes.evaluate("*sessions[0]->client", { frame: 1 }), ND_E_ONELINE)).toBe("{name = char[32] @ 0x55cad074b1a0, fd = 10, bytes_sent = 21}");
    expect(read(probes.evaluate("shape->tag"), SH_E_TAG)).toBe("{u = 1094861636, f = 12.1414223, bytes = unsigned char[4] @ 0x5629377570b0}");
  });

  it("reads locals and arguments, one per typed line", () => {
    expect(read(probes.locals(), ND_LOCALS)).toEqual([{ name: "fd", value: "10" }]);
    expect(read(probes.arguments(), ND_ARGS)).toEqual([
      { name: "session", value: "0x562c3569c2f0" },
      { name: "message", value: '0x562c133ce02e ""' },
    ]);
    expect(read(probes.locals(), SH_LOCALS)).toEqual([
      { name: "corners", value: "{{x = 1, y = 2}, {x = -3, y = 4}}" },
      { name: "letter", value: "113 'q'" },
      { name: "nothing", value: "0x0" },
    ]);
    expect(read(probes.locals({ frame: 1 }), DC_LOCALS_MAIN)).toEqual([{ name: "bus", value: "{subscribers = {0x55e7969282a0, 0x55e7969282d0, 0x0, 0x0}, count = 2}" }]);
  });

  it("joins a C++ value's summary and its children into one line", () => {
    const [manifest, field] = read(probes.arguments({ frame: 7 }), UE_ARGS);
    expect(manifest).toEqual({ name: "manifest", value: 'size=1: {{first = "name", second = "metrics"}}' });
    expect(field?.name).toBe("field");
    expect(field?.value).toMatch(/^"version": \{_M_dataplus = \{_M_p = "version"\}, _M_string_length = 7, /);
    expect(field?.value).not.toContain("\n");
  });
});

describe("instructions, read into gdb's AT&T spelling", () => {
  it("reads a function's listing: its name, each instruction's offset, and the frame's pc", () => {
    const listing = read(probes.disassemble({ frame: 1 }), ND_DIS_F1);
    expect(listing.function).toBe("broadcast");
    expect(listing.unreadable).toBe(false);
    expect(listing.instructions).toHaveLength(26);
    expect(listing.instructions.filter((i) => i.current).map((i) => [i.address, i.location])).toEqual([["0x562c133cd25e", "+66"]]);
    expect(listing.instructions[0]).toEqual({ address: "0x562c133cd21c", location: "+0", mnemonic: "push", operands: ["%rbp"], reference: null, current: false });
  });

  it("drops LLVM's size suffix where a register operand gives the size", () => {
    expect(at(ND_DIS_F1, "0x562c133cd21d")).toMatchObject({ mnemonic: "mov", operands: ["%rsp", "%rbp"] });
    expect(at(ND_DIS_F1, "0x562c133cd265")).toMatchObject({ mnemonic: "cmp", operands: ["-0x1c(%rbp)", "%eax"] });
    expect(at(ND_DIS_F1, "0x562c133cd249")).toMatchObject({ mnemonic: "add", operands: ["%rdx", "%rax"] });
    expect(at(UE_DIS, "0x5647da9fd4c6")).toMatchObject({ mnemonic: "test", operands: ["%al", "%al"] });
  });

  it("keeps the suffix where no register says the size", () => {
    expect(at(ND_DIS_F1, "0x562c133cd22f")).toMatchObject({ mnemonic: "movl", operands: ["$0x0", "-0x4(%rbp)"] });
    expect(at(ND_DIS_F1, "0x562c133cd25e")).toMatchObject({ mnemonic: "addl", operands: ["$0x1", "-0x4(%rbp)"] });
    expect(at(SH_DIS, "0x55a0a9b4718f")).toMatchObject({ mnemonic: "movb", operands: ["$0x71", "-0x1(%rbp)"] });
    expect(at(SH_DIS, "0x55a0a9b47193")).toMatchObject({ mnemonic: "movq", operands: ["$0x0", "-0x10(%rbp)"] });
  });

  it("never sizes push, pop, call, ret, leave and lea, and leaves unsized mnemonics alone", () => {
    const mnemonics = read(probes.disassemble({ frame: 1 }), ND_DIS_F1).instructions.map((i) => i.mnemonic);
    expect(new Set(mnemonics)).toEqual(new Set(["push", "mov", "sub", "movl", "jmp", "cltq", "lea", "add", "call", "addl", "cmp", "jl", "nop", "leave", "ret"]));
    expect(at(UE_DIS, "0x5647da9fd5a1")).toMatchObject({ mnemonic: "pop", operands: ["%r12"] });
  });

  it("keeps SSE's movq, which is not a sized mov", () => {
    expect(at(DC_DIS_MAIN, "0x55e77eac3219")).toMatchObject({ mnemonic: "movq", operands: ["%xmm0", "-0x20(%rbp)"] });
    expect(at(DC_DIS_MAIN, "0x55e77eac3211")).toMatchObject({ mnemonic: "movaps", operands: ["%xmm0", "-0x40(%rbp)"] });
    expect(at(DC_DIS_MAIN, "0x55e77eac320d")).toMatchObject({ mnemonic: "pxor", operands: ["%xmm0", "%xmm0"] });
  });

  it("splits operands at commas outside an address's parentheses, and leaves lldb's comments out", () => {
    expect(at(ND_DIS_F1, "0x562c133cd23d")).toMatchObject({ mnemonic: "lea", operands: ["(,%rax,8)", "%rdx"] });
    expect(at(SH_DIS, "0x55a0a9b47181")).toMatchObject({ mnemonic: "movl", operands: ["$0xfffffffd", "-0x18(%rbp)"], reference: null });
  });

  it("computes a direct call's target from its e8 rel32 encoding (lldb prints it unrelocated) and names it", () => {
    expect(at(ND_DIS_F1, "0x562c133cd259").operands).toEqual(["0x562c133cd1ce <send_to_client>"]);
    expect(at(DC_DIS_MAIN, "0x55e77eac327c").operands).toEqual(["0x55e77eac31ae <publish>"]);
  });

  it("names a call through the PLT `symbol@plt`", () => {
    expect(at(ND_DIS_F0, "0x562c133cd1ff")).toMatchObject({ mnemonic: "call", operands: ["0x562c133cd040 <strlen@plt>"] });
    expect(at(UE_DIS, "0x5647da9fd54d").operands).toEqual(["0x5647da9fd2f0 <__cxa_throw@plt>"]);
  });

  it("computes jumps from e9 rel32, eb rel8, 7x rel8 and 0f 8x rel32, forwards and backwards", () => {
    expect(at(ND_DIS_MAIN, "0x562c133cd27e")).toMatchObject({ mnemonic: "jmp", operands: ["0x562c133cd315 <main+167>"] });
    expect(at(ND_DIS_F1, "0x562c133cd236")).toMatchObject({ mnemonic: "jmp", operands: ["0x562c133cd262 <broadcast+70>"] });
    expect(at(ND_DIS_F1, "0x562c133cd268")).toMatchObject({ mnemonic: "jl", operands: ["0x562c133cd238 <broadcast+28>"] });
    expect(at(DC_DIS_MAIN, "0x55e77eac326e")).toMatchObject({ mnemonic: "jle", operands: ["0x55e77eac3227 <main+34>"] });
    expect(at(ND_DIS_MAIN, "0x562c133cd319")).toMatchObject({ mnemonic: "jle", operands: ["0x562c133cd283 <main+21>"] });
    expect(at(UE_DIS, "0x5647da9fd4c8")).toMatchObject({ mnemonic: "je", operands: ["0x5647da9fd552 <::read_field(const Manifest &, const std::string &)+217>"] });
  });

  it("resolves a rip-relative operand to the address it names, with lldb's symbol when it gives one", () => {
    expect(at(ND_DIS_MAIN, "0x562c133cd2e1").reference).toEqual({ address: "0x562c133ce01f", symbol: null });
    expect(at(DC_DIS_MAIN, "0x55e77eac3247")).toMatchObject({ mnemonic: "lea", operands: ["-0xf5(%rip)", "%rdx"], reference: { address: "0x55e77eac3159", symbol: "print_event" } });
    expect(at(UE_DIS, "0x5647da9fd540").reference).toEqual({ address: "0x5647daa02d80", symbol: "_ZTISt13runtime_error@GLIBCXX_3.4" });
    expect(at(UE_DIS, "0x5647da9fd536")).toMatchObject({ mnemonic: "mov", reference: { address: "0x5647daa02fa8", symbol: null } });
  });

  it("reads instructions from the pc and from an address", () => {
    const fromPc = read({ kind: "instructions", count: 4, frame: 1 }, ND_INSNS);
    expect(fromPc.function).toBe("broadcast");
    expect(fromPc.instructions.map((i) => [i.address, i.mnemonic, i.current])).toEqual([
      ["0x562c133cd25e", "addl", true],
      ["0x562c133cd262", "mov", false],
      ["0x562c133cd265", "cmp", false],
      ["0x562c133cd268", "jl", false],
    ]);
    expect(read({ kind: "instructions", count: 3 }, CN_INSNS).function).toBe("Session::idle_seconds");
    const fromAddress = read({ kind: "instructions", count: 3, address: "0x562c133cd1ce" }, ND_INSNS_AT);
    expect(fromAddress.instructions.map((i) => [i.location, i.mnemonic, i.current])).toEqual([
      ["+0", "push", false],
      ["+1", "mov", false],
      ["+4", "push", false],
    ]);
  });

  it("says code it could not read is unreadable", () => {
    expect(read(probes.disassemble(), BJ_DIS)).toEqual({ function: null, instructions: [], unreadable: true });
  });
});

describe("memory, strings, symbols and source", () => {
  it("reads 8-byte words and where they start", () => {
    expect(read(probes.memory("shape", 4), SH_MEM)).toEqual({ start: "0x7ffec6247b60", words: [0x55a0dcef82a0n, 0x786f62n, 0x400000003n, 0x7fffffffbn] });
    expect(read(probes.memory("$rsp", 5), SH_MEM_RSP).words).toEqual([0x7ffec6247bb0n, 0x55a0a9b4726fn, 0n, 0x140000000an, 0x55a0dcef82a0n]);
    expect(read(probes.memory("$rsp + 8", 2), ND_MEM_EXPR)).toEqual({ start: "0x7ffe3f157c98", words: [0x562c3569c2f0n, 0x7ffe3f157e68n] });
  });

  it("reads no words from memory the core does not hold", () => {
    expect(read(probes.memory("0x0", 2), BJ_MEM)).toEqual({ start: null, words: [] });
  });

  it("reads a string whose quotes lldb did not escape", () => {
    expect(read(probes.string("shape->name"), SH_STRING)).toBe('square "one"\tok');
  });

  it("reads consecutive strings: quotes and backslashes as printed, escapes and bytes decoded, no length cut", () => {
    expect(read({ kind: "strings", address: "block", count: 5 }, ST_STRINGS)).toEqual(['say "hi"', "back\\slash", "tab\tnew\nline", "caf\xc3\xa9 \x05 end", "x".repeat(300)]);
    expect(read({ kind: "strings", address: "*(char **)0x00007ffe3f157e58", count: 3 }, ND_STRINGS)).toEqual(["./null-deref", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=/etc/ssl/certs/ca-certificates.crt", "BASE_URL=/"]);
  });

  it("reads glibc's abort message without its newline", () => {
    expect(read({ kind: "abort-message" }, AM_MSG)).toBe("free(): invalid pointer");
  });

  it("reads the symbol at an address: its name, offset, section and module", () => {
    expect(read(probes.symbol("0x7f9ef7ab7ef0"), ND_LOOKUP_LIBC)).toMatchObject({ symbol: "__GI___libc_free", offset: 0, section: ".text", module: "libc.so.6" });
    expect(read(probes.symbol("0x562c133cd1e7"), ND_LOOKUP_OWN)).toMatchObject({ symbol: "send_to_client", offset: 25, section: ".text", module: "null-deref" });
    expect(read(probes.symbol("0x562c133cfdd8"), ND_LOOKUP_DATA)).toMatchObject({ symbol: "__do_global_dtors_aux_fini_array_entry", offset: 0, section: ".fini_array", module: "null-deref" });
    expect(read(probes.symbol("&shape->area", true), SH_LOOKUP_IND)).toMatchObject({ symbol: "area", offset: 0, section: ".text", module: "shapes" });
  });

  it("reads no symbol where lldb printed nothing", () => {
    expect(read(probes.symbol("0x0"), "")).toBeNull();
  });

  it("reads the asked lines of a source file, though lldb lists one more", () => {
    expect(read(probes.source("/work/main/tests/fixtures/programs/null-deref.c", 25, 28), ND_SOURCE)).toEqual([
      { line: 25, text: "static int send_to_client(struct session *session, const char *message)" },
      { line: 26, text: "{" },
      { line: 27, text: "    int fd = session->client->fd; // CULPRIT" },
      { line: 28, text: "    session->client->bytes_sent += (int)strlen(message);" },
    ]);
  });
});

describe("the signal, the modules and the address space", () => {
  it("reads the selected thread's signal from the thread list", () => {
    expect(read({ kind: "exit-signal" }, ND_THREADS)).toBe(11);
    expect(read({ kind: "exit-signal" }, AM_THREADS)).toBe(6);
    expect(read({ kind: "exit-signal" }, UE_THREADS)).toBe(6);
    expect(read({ kind: "exit-signal" }, TC_THREADS)).toBe(11);
    // lldb shows the SIGSTOP a gcore dump was taken with; triage knows it ended nothing.
    expect(read({ kind: "exit-signal" }, DL_THREADS)).toBe(19);
  });

  it("reads no signal record from LLDB 16, which shows no code and no fault address", () => {
    expect(read({ kind: "signal-info" }, ND_THREADS)).toBeNull();
    expect(read({ kind: "signal-info" }, AM_THREADS)).toBeNull();
  });

  it("reads no managed side from the images", () => {
    expect(read({ kind: "managed-threads" }, ND_IMAGES)).toBeNull();
    expect(read({ kind: "managed-stack" }, ND_IMAGES)).toBeNull();
    expect(read({ kind: "managed-exception" }, ND_IMAGES)).toBeNull();
    expect(read({ kind: "managed-stacks" }, ND_IMAGES)).toEqual([]);
    expect(read({ kind: "managed-locks" }, ND_IMAGES)).toEqual([]);
    expect(read({ kind: "managed-heap" }, ND_IMAGES)).toEqual([]);
  });

  it("reads the loaded libraries, not the program itself", () => {
    expect(read({ kind: "shared-libraries" }, ND_IMAGES)).toEqual([
      { from: "0x7f9ef7c14000", to: null, symbolsRead: true, missingDebugInfo: false, path: "[vdso]" },
      { from: "0x7f9ef7a1f000", to: null, symbolsRead: true, missingDebugInfo: false, path: "/lib/x86_64-linux-gnu/libc.so.6" },
      { from: "0x7f9ef7c16000", to: null, symbolsRead: true, missingDebugInfo: false, path: "/lib64/ld-linux-x86-64.so.2" },
    ]);
  });

  it("reads each module's loaded sections, the program's as the executable's", () => {
    const files = read({ kind: "sections" }, ND_SECTIONS);
    expect(files.executable).toBe("/tmp/dumpdbg-fixtures/null-deref-df0d16861ca5f6ed-f52299eb/null-deref");
    expect(files.sections).toEqual([
      { start: "0x562c133cd090", end: "0x562c133cd366", name: ".text", source: "exec" },
      { start: "0x562c133cfdd8", end: "0x562c133cfde0", name: ".fini_array", source: "exec" },
      { start: "0x562c133d0038", end: "0x562c133d0040", name: ".bss", source: "exec" },
      { start: "0x7f9ef7c14780", end: "0x7f9ef7c1545c", name: ".text", source: "[vdso]" },
      { start: "0x7f9ef7a45380", end: "0x7f9ef7b9922d", name: ".text", source: "/lib/x86_64-linux-gnu/libc.so.6" },
      { start: "0x7f9ef7b99230", end: "0x7f9ef7b9a0fc", name: "__libc_freeres_fn", source: "/lib/x86_64-linux-gnu/libc.so.6" },
      { start: "0x7f9ef7c17060", end: "0x7f9ef7c3c111", name: ".text", source: "/lib64/ld-linux-x86-64.so.2" },
    ]);
  });

  it("reads the mapped regions with their permissions, leaving the gaps out", () => {
    const mappings = read({ kind: "mappings" }, ND_REGIONS);
    expect(mappings.map((m) => [m.start, m.end, m.permissions])).toEqual([
      ["0x562c133cc000", "0x562c133cd000", "r--p"],
      ["0x562c133cd000", "0x562c133ce000", "r-xp"],
      ["0x562c133ce000", "0x562c133cf000", "r--p"],
      ["0x562c133cf000", "0x562c133d0000", "r--p"],
      ["0x562c133d0000", "0x562c133d1000", "rw-p"],
      ["0x562c3569c000", "0x562c356bd000", "rw-p"],
      ["0xffffffffff600000", "0xffffffffff601000", "--xp"],
    ]);
    expect(mappings[5]).toEqual({ start: "0x562c3569c000", end: "0x562c356bd000", size: "0x21000", offset: "0x0", permissions: "rw-p", objfile: null });
  });

  it("gives a selection's or a free-form command's output back as it is", () => {
    expect(read({ kind: "select", thread: 1 }, ND_THREADS)).toBe(ND_THREADS);
    expect(read(probes.command("thread list"), DL_THREADS)).toBe(DL_THREADS);
  });
});

describe("a command typed in lldb's language is read as the probe it is", () => {
  /** Each command is recognised as its probe, or as none. */
  function expectRecognised(cases: Array<[string, Probe | null]>): void {
    for (const [command, probe] of cases) expect(recognise(command), command).toEqual(probe);
  }

  it("reads a stack: `bt`, `thread backtrace`, a count as typed (no frame of it is an extra one)", () => {
    expectRecognised([
      ["bt", { kind: "backtrace", limit: 0 }],
      ["bt 40", { kind: "backtrace", limit: 40 }],
      ["thread backtrace --count 41", { kind: "backtrace", limit: 41 }],
      ["[thread 2] thread backtrace -c 12", { kind: "backtrace", limit: 12, thread: 2 }],
    ]);
  });
  it("reads every thread's stack, the count before or after `all`", () => {
    expectRecognised([
      ["bt all", { kind: "thread-backtraces", threads: "all" }],
      ["thread backtrace --count 64 all", { kind: "thread-backtraces", threads: "all", limit: 64 }],
      ["thread backtrace all -c 20", { kind: "thread-backtraces", threads: "all", limit: 20 }],
      ["thread list", { kind: "threads" }],
    ]);
  });
  it("reads registers, abbreviated and placed", () => {
    expectRecognised([
      ["register read", { kind: "registers" }],
      ["re read rip rsp", { kind: "registers", names: ["rip", "rsp"] }],
      ["[frame 1] register read rip rsp", { kind: "registers", names: ["rip", "rsp"], frame: 1 }],
    ]);
  });
  it("reads locals and arguments through the prefix, spaces around it or not", () => {
    expectRecognised([
      ["[thread 3, frame 2] frame variable --no-args", { kind: "locals", thread: 3, frame: 2 }],
      ["  [ thread 4 ]  frame variable -l", { kind: "arguments", thread: 4 }],
    ]);
  });
  it("reads a function's listing and instructions from the pc", () => {
    expectRecognised([
      ["di -b -f", { kind: "disassemble" }],
      ["[frame 1] disassemble --bytes --pc --count 6", { kind: "instructions", count: 6, frame: 1 }],
    ]);
  });
  it("reads the modules, the sections and the regions", () => {
    expectRecognised([
      ["target modules list", { kind: "shared-libraries" }],
      ["image dump sections", { kind: "sections" }],
      ["memory region -a", { kind: "mappings" }],
    ]);
  });
  it("reads no probe from a command that is none, nor from a stack addressed by a frame", () => {
    expectRecognised([
      ["[thread 2, frame 1] bt", null],
      ["frame variable", null],
      ["expression -- session->client", null],
      ["frame select 1", null],
      ["disassemble --bytes --start-address 0x401130 --count 6", null],
    ]);
  });

  it("reads back every probe it renders in a form it recognises as the same probe", () => {
    const roundTrip: Probe[] = [
      { kind: "threads" },
      probes.registers(),
      { kind: "registers", names: ["rip", "rsp"], frame: 1 },
      probes.locals({ thread: 2, frame: 3 }),
      probes.arguments({ frame: 1 }),
      probes.disassemble({ thread: 2 }),
      { kind: "instructions", count: 6 },
      { kind: "thread-backtraces", threads: "all", limit: 8 },
      { kind: "shared-libraries" },
      { kind: "sections" },
      { kind: "mappings" },
    ];
    for (const probe of roundTrip) expect(probeKey(recognise(render(probe)) as Probe), render(probe)).toBe(probeKey(probe));
  });
});

describe("selection", () => {
  it("tells commands that move the selection from ones that only read, the prefixed ones among them", () => {
    for (const moves of ["thread select 2", "frame select 1", "f 3", "t 2", "up", "down 2", "_regexp-up"]) expect(movesSelection(moves), moves).toBe(true);
    for (const reads of ["thread list", "thread backtrace all", "bt", "frame variable", "frame info", "target modules list", "[thread 2, frame 1] frame variable", "[thread 2] frame select 1"]) {
      expect(movesSelection(reads), reads).toBe(false);
    }
  });
});

describe("values that frame variable could not read", () => {
  it("are no value, as gdb's error would be", () => {
    // Captured from `frame variable` on a Windows minidump (config-null.exe) read by lldb-16.
    expect(lldbVocabulary.read(probes.evaluate("*port"), "(const setting) *port = <parent is NULL>\n")).toBeNull();
    expect(lldbVocabulary.read(probes.evaluate("port->value"), "(char[64]) port->value = <parent is NULL>\n")).toBeNull();
    expect(lldbVocabulary.read(probes.evaluate("config->first->next"), "(setting *) config->first->next = <read memory from 0xc817a0 failed (0 of 8 bytes read)>\n")).toBeNull();
    expect(lldbVocabulary.read(probes.evaluate("port"), "(const setting *) port = NULL\n")).toBe("(const setting *) 0x0");
    expect(lldbVocabulary.read(probes.evaluate("*config"), "(const config) *config = {\n  first = 0x0000000000c81740\n  count = 3\n}\n")).toBe("{first = 0xc81740, count = 3}");
    expect(lldbVocabulary.read(probes.evaluate("&config->count"), "(int *) &count = 0x000000000021fd18\n")).toBe("(int *) 0x21fd18");
  });
});

describe("chars", () => {
  it("read with their code first, as gdb prints them", () => {
    // `frame variable` and `expression` on the illegal-instruction fixture's core: frame[0] was 9.
    expect(lldbVocabulary.read(probes.evaluate("frame[0]"), "(const unsigned char) $0 = '\\t'\n")).toBe("9 '\\t'");
    expect(lldbVocabulary.read(probes.evaluate("c"), "(char) $1 = '\\xff'\n")).toBe("-1 '\\xff'");
    expect(lldbVocabulary.read(probes.locals(), "(char) first = 'a'\n(int) n = 3\n")).toEqual([
      { name: "first", value: "97 'a'" },
      { name: "n", value: "3" },
    ]);
    // Not a char: left as lldb printed it.
    expect(lldbVocabulary.read(probes.evaluate("s"), '(const char *) $2 = 0x0000555555556004 "a"\n')).toBe('0x555555556004 "a"');
  });
});

describe("lldb reads a symbol's address", () => {
  it("where it is loaded: a shared library's relocated range, not its file address", () => {
    const probe = { kind: "symbol-address", name: "VMError::_detail_msg" } as const;
    expect(render(probe)).toBe("image lookup --symbol VMError::_detail_msg --verbose");
    const output = [
      "1 symbols match 'VMError::_detail_msg' in /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so:",
      "        Address: libjvm.so[0x0000000001363840] (libjvm.so.PT_LOAD[3]..bss + 337216)",
      "        Summary: libjvm.so`VMError::_detail_msg",
      '         Module: file = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", arch = "x86_64"',
      '         Symbol: id = {0x00005c08}, range = [0x00007ffff7d63840-0x00007ffff7d63c40), name="VMError::_detail_msg", mangled="_ZN7VMError11_detail_msgE"',
      "",
    ].join("\n");
    expect(read(probe, output)).toBe("0x7ffff7d63840");
    // A program not relocated, its summary alone: the file address is where it is.
    expect(read(probe, "1 match found in /srv/svc:\n        Address: svc[0x00000000005364b0] (svc.PT_LOAD[2]..bss + 4272)\n")).toBe("0x5364b0");
  });
});
