/**
 * What cdb prints, for tests on machines without it: written for this project from the formats
 * Microsoft documents for each command (`kn`, `~`, `r`, `lm`, `lmf`, `u`, `dq`, `da`, `ln`, `ls`,
 * `dv /i /t /v`, `??`, `.exr -1`, `.lastevent`, `!analyze -v`, `!address`) and for SOS (`!threads`,
 * `!clrstack -a`, `!pe`, `!syncblk`, `!dumpheap -stat`), with spacing as those pages show it.
 * Three dumps: a native null dereference (`config_null.exe` reading a setting that is missing, on
 * x64 with `-lines`), a .NET NullReferenceException and a .NET deadlock over two monitors.
 */

/** The native crash: thread 0 (tid 0x1b3c) faults in `listen_port` on `port->value`, port == NULL. */
export const NATIVE = {
  banner: `Windows 10 Version 19045 MP (8 procs) Free x64
Product: WinNt, suite: SingleUserTS
Debug session time: Thu Nov 26 14:02:11.000 2026 (UTC + 0:00)
System Uptime: not available
Process Uptime: 0 days 0:00:01.000
................
This dump file has an exception of interest stored in it.
The stored exception information can be accessed via .ecxr.
(1a2c.1b3c): Access violation - code c0000005 (first/second chance not available)
For analysis of this file, run !analyze -v
*** WARNING: Unable to verify checksum for config_null.exe
ntdll!NtGetContextThread+0x14:
00007ffb\`1345d0e4 c3              ret`,
  threads: `.  0  Id: 1a2c.1b3c Suspend: 0 Teb: 00000000\`00356000 Unfrozen "main"
   1  Id: 1a2c.2d40 Suspend: 0 Teb: 00000000\`00358000 Unfrozen
   2  Id: 1a2c.3e54 Suspend: 0 Teb: 00000000\`0035a000 Unfrozen "crash-reporter"`,
  threadsWithFrames: `.  0  Id: 1a2c.1b3c Suspend: 0 Teb: 00000000\`00356000 Unfrozen "main"
 # Child-SP          RetAddr               Call Site
00 00000000\`0014f1a8 00007ffb\`11b2a8c5     ntdll!NtGetContextThread+0x14

   1  Id: 1a2c.2d40 Suspend: 0 Teb: 00000000\`00358000 Unfrozen
 # Child-SP          RetAddr               Call Site
00 00000000\`0024fa38 00007ffb\`134227c7     ntdll!NtWaitForWorkViaWorkerFactory+0x14

   2  Id: 1a2c.3e54 Suspend: 0 Teb: 00000000\`0035a000 Unfrozen "crash-reporter"
 # Child-SP          RetAddr               Call Site
00 00000000\`0034f8c8 00007ffb\`11b3f0be     ntdll!NtWaitForSingleObject+0x14`,
  /** `kn 0x29` after `.ecxr`. */
  stack: ` # Child-SP          RetAddr               Call Site
00 00000000\`0014fa10 00007ff6\`1a2b10a1     config_null!listen_port+0x12 [C:\\src\\service\\config-null.c @ 44]
01 (Inline Function) --------\`--------     config_null!start_listener+0x9 [C:\\src\\service\\config-null.c @ 50]
02 00000000\`0014fa40 00007ff6\`1a2b14e0     config_null!main+0x51 [C:\\src\\service\\config-null.c @ 57]
03 00000000\`0014fa80 00007ffb\`12347614     config_null!__scrt_common_main_seh+0x10c [d:\\a01\\_work\\12\\s\\src\\vctools\\crt\\vcstartup\\src\\startup\\exe_common.inl @ 288]
04 00000000\`0014fac0 00007ffb\`134226a1     KERNEL32!BaseThreadInitThunk+0x14
05 00000000\`0014faf0 00000000\`00000000     ntdll!RtlUserThreadStart+0x21`,
  registers: `rax=0000000000000000 rbx=0000000000000001 rcx=000001f2a3b4c5d0
rdx=00007ff61a2c3040 rsi=0000000000000000 rdi=000001f2a3b4c5d0
rip=00007ff61a2b1012 rsp=000000000014fa10 rbp=0000000000000000
 r8=0000000000000004  r9=0000000000000000 r10=0000000000000000
r11=0000000000000246 r12=0000000000000000 r13=0000000000000000
r14=0000000000000000 r15=0000000000000000
iopl=0         nv up ei pl zr na po nc
cs=0033  ss=002b  ds=002b  es=002b  fs=0053  gs=002b             efl=00010246
config_null!listen_port+0x12:
00007ff6\`1a2b1012 8b4020          mov     eax,dword ptr [rax+20h] ds:00000000\`00000020=????????`,
  modules: `start             end                 module name
00007ff6\`1a2b0000 00007ff6\`1a2c6000   config_null C (private pdb symbols)  C:\\src\\service\\x64\\Release\\config_null.pdb
00007ffb\`11a90000 00007ffb\`11d58000   KERNELBASE   (deferred)             
00007ffb\`12330000 00007ffb\`123ed000   KERNEL32   (pdb symbols)          c:\\symbols\\kernel32.pdb\\1B3C8F2A9D7E4C31A5F09E8D7C6B5A491\\kernel32.pdb
00007ffb\`13400000 00007ffb\`135f8000   ntdll      (export symbols)       ntdll.dll

Unloaded modules:
00007ffb\`0f210000 00007ffb\`0f23c000   dbgcore.DLL`,
  moduleFiles: `start             end                 module name
00007ff6\`1a2b0000 00007ff6\`1a2c6000   config_null C:\\Program Files\\Service\\config_null.exe
00007ffb\`11a90000 00007ffb\`11d58000   KERNELBASE C:\\Windows\\System32\\KERNELBASE.dll
00007ffb\`12330000 00007ffb\`123ed000   KERNEL32 C:\\Windows\\System32\\KERNEL32.DLL
00007ffb\`13400000 00007ffb\`135f8000   ntdll    C:\\Windows\\SYSTEM32\\ntdll.dll`,
  /** `u @$scopeip L0x4` */
  instructions: `config_null!listen_port+0x12 [C:\\src\\service\\config-null.c @ 44]:
   44 00007ff6\`1a2b1012 8b4020          mov     eax,dword ptr [rax+20h]
   44 00007ff6\`1a2b1015 4883c428        add     rsp,28h
   44 00007ff6\`1a2b1019 c3              ret
   44 00007ff6\`1a2b101a cc              int     3`,
  /** `uf @$scopeip` */
  function: `config_null!listen_port [C:\\src\\service\\config-null.c @ 42]:
   42 00007ff6\`1a2b1000 4883ec28        sub     rsp,28h
   43 00007ff6\`1a2b1004 488d15352e0100  lea     rdx,[config_null!\`string' (00007ff6\`1a2c3e40)]
   43 00007ff6\`1a2b100b e8f0000000      call    config_null!config_find (00007ff6\`1a2b1100)
   44 00007ff6\`1a2b1010 ff15ea2f0100    call    qword ptr [config_null!_imp_atoi (00007ff6\`1a2c4000)]
   44 00007ff6\`1a2b1016 c64491f800      mov     byte ptr [rcx+rdx*4-8],0
   44 00007ff6\`1a2b101d 65488b042530000000 mov   rax,qword ptr gs:[30h]
   44 00007ff6\`1a2b1026 ffd0            call    rax
   45 00007ff6\`1a2b1028 4883c428        add     rsp,28h
   45 00007ff6\`1a2b102c c3              ret`,
  /** `dq 0x14fa10 L0x4` */
  memory: `00000000\`0014fa10  00007ff6\`1a2b10a1 000001f2\`a3b4c5d0
00000000\`0014fa20  ????????\`???????? ????????\`????????`,
  /** `da 0x7ff61a2c3e40` */
  string: `00007ff6\`1a2c3e40  "port"`,
  /** `da` of a string longer than one line */
  longString: `00007ff6\`1a2c3f00  "log=/var/log/service.log; rotate=daily; keep=14; c"
00007ff6\`1a2c3f30  "ompress=yes"`,
  /** `ln 0x7ff61a2b1012` */
  symbol: `Browse module
Set bu breakpoint

[C:\\src\\service\\config-null.c @ 44]
(00007ff6\`1a2b1000)   config_null!listen_port+0x12   |  (00007ff6\`1a2b1040)   config_null!start_listener`,
  /** `ls 0n43, 0n3` after `lsf` */
  source: `    43:     const struct setting *port = config_find(config, "port");
>   44:     return atoi(port->value); /* no "port" line, port is NULL */
    45: }`,
  /** `dv /i /t /v` in frame 0 */
  variables: `prv param  @rcx              struct config * config = 0x000001f2\`a3b4c5d0
prv local  00000000\`0014fa30 struct setting * port = 0x00000000\`00000000
prv local  00000000\`0014fa38 int attempts = 0n3
prv local  00000000\`0014fa3c char * name = 0x00007ff6\`1a2c3e40 "port"`,
  /** `?? config->count` */
  evaluateInt: "int 0n3",
  /** `?? port` */
  evaluatePointer: "struct setting * 0x00000000`00000000",
  /** `?? *config` */
  evaluateStruct: `struct config
   +0x000 first            : 0x000001f2\`a3b4c610 setting
   +0x008 count            : 0n3`,
  evaluateError: "Couldn't resolve error at 'nosuch'",
  exceptionRecord: `ExceptionAddress: 00007ff61a2b1012 (config_null!listen_port+0x0000000000000012)
   ExceptionCode: c0000005 (Access violation)
  ExceptionFlags: 00000000
NumberParameters: 2
   Parameter[0]: 0000000000000000
   Parameter[1]: 0000000000000020
Attempt to read from address 0000000000000020`,
  lastEvent: `Last event: 1a2c.1b3c: Access violation - code c0000005 (first/second chance not available)
  debugger time: Thu Nov 26 14:05:40.123 2026 (UTC + 0:00)`,
  analyze: `*******************************************************************************
*                                                                             *
*                        Exception Analysis                                   *
*                                                                             *
*******************************************************************************


KEY_VALUES_STRING: 1

    Key  : AV.Dereference
    Value: NullClassPtr

    Key  : AV.Fault
    Value: Read

FILE_IN_CAB:  crash.dmp

CONTEXT:  (.ecxr)
rax=0000000000000000 rbx=0000000000000001 rcx=000001f2a3b4c5d0
rip=00007ff61a2b1012 rsp=000000000014fa10 rbp=0000000000000000
config_null!listen_port+0x12:
00007ff6\`1a2b1012 8b4020          mov     eax,dword ptr [rax+20h] ds:00000000\`00000020=????????
Resetting default scope

EXCEPTION_RECORD:  (.exr -1)
ExceptionAddress: 00007ff61a2b1012 (config_null!listen_port+0x0000000000000012)
   ExceptionCode: c0000005 (Access violation)
  ExceptionFlags: 00000000
NumberParameters: 2
   Parameter[0]: 0000000000000000
   Parameter[1]: 0000000000000020
Attempt to read from address 0000000000000020

PROCESS_NAME:  config_null.exe

READ_ADDRESS:  0000000000000020 

ERROR_CODE: (NTSTATUS) 0xc0000005 - The instruction at 0x%p referenced memory at 0x%p. The memory could not be %s.

EXCEPTION_CODE_STR:  c0000005

EXCEPTION_PARAMETER1:  0000000000000000

EXCEPTION_PARAMETER2:  0000000000000020

STACK_TEXT:  
00000000\`0014fa10 00007ff6\`1a2b10a1     : 00000000\`00000000 00000000\`00000000 00000000\`00000000 00000000\`00000000 : config_null!listen_port+0x12
00000000\`0014fa40 00007ff6\`1a2b14e0     : 00000000\`00000000 00000000\`00000000 00000000\`00000000 00000000\`00000000 : config_null!main+0x51


FAULTING_SOURCE_LINE:  C:\\src\\service\\config-null.c

FAULTING_SOURCE_FILE:  C:\\src\\service\\config-null.c

FAULTING_SOURCE_LINE_NUMBER:  44

SYMBOL_NAME:  config_null!listen_port+12

MODULE_NAME: config_null

IMAGE_NAME:  config_null.exe

STACK_COMMAND:  ~0s ; .ecxr ; kb

FAILURE_BUCKET_ID:  NULL_CLASS_PTR_READ_c0000005_config_null.exe!listen_port

OS_VERSION:  10.0.19041.1

OSPLATFORM_TYPE:  x64

OSNAME:  Windows 10

FAILURE_ID_HASH:  {5d1c7a2b-8e3f-4a6b-9c0d-1e2f3a4b5c6d}

Followup:     MachineOwner
---------`,
  regions: `
  BaseAddress      EndAddress+1        RegionSize     Type       State                 Protect             Usage
--------------------------------------------------------------------------------------------------------------------------
+        0\`00000000        0\`0014c000        0\`0014c000             MEM_FREE    PAGE_NOACCESS                      Free       
+        0\`0014c000        0\`00150000        0\`00004000 MEM_PRIVATE MEM_COMMIT  PAGE_READWRITE                     Stack      [~0; 1a2c.1b3c]
+     7ff6\`1a2b0000     7ff6\`1a2b1000        0\`00001000 MEM_IMAGE   MEM_COMMIT  PAGE_READONLY                      Image      [config_null; "C:\\Program Files\\Service\\config_null.exe"]
|     7ff6\`1a2b1000     7ff6\`1a2c3000        0\`00012000 MEM_IMAGE   MEM_COMMIT  PAGE_EXECUTE_READ                  Image      [config_null; "C:\\Program Files\\Service\\config_null.exe"]`,
};

/** A .NET 8 service that dereferenced null: exception 0xe0434352 on thread 0, SOS loaded. */
export const MANAGED_CRASH = {
  modules: `start             end                 module name
00000000\`6f2a0000 00000000\`6f2b2000   OrderService C (service symbols: CLR Symbols with PDB: C:\\app\\OrderService.pdb)  
00007ffa\`1a000000 00007ffa\`1a4e6000   coreclr    (deferred)             
00007ffb\`11a90000 00007ffb\`11d58000   KERNELBASE   (deferred)             
00007ffb\`13400000 00007ffb\`135f8000   ntdll      (pdb symbols)          c:\\symbols\\ntdll.pdb\\1EB5D4F2A0B34C82B1E1C9F0A6D7E3F21\\ntdll.pdb`,
  moduleFiles: `start             end                 module name
00000000\`6f2a0000 00000000\`6f2b2000   OrderService C:\\app\\OrderService.dll
00007ffa\`1a000000 00007ffa\`1a4e6000   coreclr  C:\\Program Files\\dotnet\\shared\\Microsoft.NETCore.App\\8.0.0\\coreclr.dll
00007ffb\`11a90000 00007ffb\`11d58000   KERNELBASE C:\\Windows\\System32\\KERNELBASE.dll
00007ffb\`13400000 00007ffb\`135f8000   ntdll    C:\\Windows\\SYSTEM32\\ntdll.dll`,
  threads: `ThreadCount:      3
UnstartedThread:  0
BackgroundThread: 2
PendingThread:    0
DeadThread:       0
Hosted Runtime:   no
                                                                                                            Lock  
 DBG   ID     OSID ThreadOBJ           State GC Mode     GC Alloc Context                  Domain           Count Apt Exception
   0    1     1b3c 000001F2A3B4C5D0    2a020 Preemptive  000001F2A5001234:000001F2A5002000 000001f2a3b2a0e0 -00001 MTA System.NullReferenceException 000001f2a5000f10
   4    2     2d40 000001F2A3B612A0    2b220 Preemptive  0000000000000000:0000000000000000 000001f2a3b2a0e0 -00001 MTA (Finalizer) 
XXXX    3        0 000001F2A3B7A0F0  1039820 Preemptive  0000000000000000:0000000000000000 000001f2a3b2a0e0 -00001 Ukn (Threadpool Worker) `,
  clrstack: `OS Thread Id: 0x1b3c (0)
        Child SP               IP Call Site
000000000014F2B0 00007FFA1B2C3D4E OrderService.Pricing.Discount(OrderService.Order) [C:\\app\\src\\Pricing.cs @ 27]
    PARAMETERS:
        order (0x000000000014F2F0) = 0x000001f2a5000e28
    LOCALS:
        0x000000000014F2D8 = 0x0000000000000000

000000000014F300 00007FFA1B2C3C10 OrderService.Program.Main(System.String[]) [C:\\app\\src\\Program.cs @ 12]
    PARAMETERS:
        args (0x000000000014F340) = 0x000001f2a5000d10
    LOCALS:
        <no data>

000000000014F5E8 00007ffa1a2f1d83 [GCFrame: 000000000014f5e8] `,
  printException: `Exception object: 000001f2a5000f10
Exception type:   System.NullReferenceException
Message:          Object reference not set to an instance of an object.
InnerException:   <none>
StackTrace (generated):
    SP               IP               Function
    000000000014F2B0 00007FFA1B2C3D4E OrderService!OrderService.Pricing.Discount(OrderService.Order)+0x1e
    000000000014F300 00007FFA1B2C3C10 OrderService!OrderService.Program.Main(System.String[])+0x30

StackTraceString: <none>
HResult: 80004003`,
  noException: "There is no current managed exception on this thread",
  /** `~`: threads 1-3 are the runtime's (tiered compilation, the debugger helper, the event pipe), 4 its finalizer. */
  threadList: `.  0  Id: 1a2c.1b3c Suspend: 0 Teb: 00000000\`00356000 Unfrozen
   1  Id: 1a2c.1c08 Suspend: 0 Teb: 00000000\`00358000 Unfrozen ".NET TP Worker"
   2  Id: 1a2c.1d44 Suspend: 0 Teb: 00000000\`0035a000 Unfrozen ".NET Debugger"
   3  Id: 1a2c.2a10 Suspend: 0 Teb: 00000000\`0035c000 Unfrozen ".NET EventPipe"
   4  Id: 1a2c.2d40 Suspend: 0 Teb: 00000000\`0035e000 Unfrozen ".NET Finalizer"`,
  /** `~*kn 1` */
  threadsWithFrames: `.  0  Id: 1a2c.1b3c Suspend: 0 Teb: 00000000\`00356000 Unfrozen
 # Child-SP          RetAddr               Call Site
00 00000000\`0014ee30 00007ffa\`1a1c4d2e     KERNELBASE!RaiseException+0x69

   1  Id: 1a2c.1c08 Suspend: 0 Teb: 00000000\`00358000 Unfrozen ".NET TP Worker"
 # Child-SP          RetAddr               Call Site
00 00000000\`0024f6f8 00007ffb\`11ab1b0e     ntdll!NtRemoveIoCompletion+0x14

   2  Id: 1a2c.1d44 Suspend: 0 Teb: 00000000\`0035a000 Unfrozen ".NET Debugger"
 # Child-SP          RetAddr               Call Site
00 00000000\`0026f858 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14

   3  Id: 1a2c.2a10 Suspend: 0 Teb: 00000000\`0035c000 Unfrozen ".NET EventPipe"
 # Child-SP          RetAddr               Call Site
00 00000000\`0028fa28 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14

   4  Id: 1a2c.2d40 Suspend: 0 Teb: 00000000\`0035e000 Unfrozen ".NET Finalizer"
 # Child-SP          RetAddr               Call Site
00 00000000\`002af6c8 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14`,
  /** `.exr -1` */
  exceptionRecord: `ExceptionAddress: 00007ffb11aac319 (KERNELBASE!RaiseException+0x0000000000000069)
   ExceptionCode: e0434352 (CLR exception)
  ExceptionFlags: 00000001
NumberParameters: 5
   Parameter[0]: ffffffff80004003
   Parameter[1]: 0000000000000000
   Parameter[2]: 0000000000000000
   Parameter[3]: 0000000000000000
   Parameter[4]: 00007ffa1a000000`,
  heap: `Statistics:
              MT    Count    TotalSize Class Name
00007ffa1b2c4a10        1           24 System.Object
00007ffa1b2c7f88       14          672 OrderService.Order
00007ffa1b2c5b20    1,204       58,912 System.String
Total 1,219 objects, 59,608 bytes`,
  analyze: `FAULTING_IP: 
KERNELBASE!RaiseException+69
00007ffb\`11aac319 0f1f440000      nop     dword ptr [rax+rax]

EXCEPTION_RECORD:  (.exr -1)
ExceptionAddress: 00007ffb11aac319 (KERNELBASE!RaiseException+0x0000000000000069)
   ExceptionCode: e0434352 (CLR exception)
  ExceptionFlags: 00000001
NumberParameters: 5
   Parameter[0]: ffffffff80004003
   Parameter[1]: 0000000000000000
   Parameter[2]: 0000000000000000
   Parameter[3]: 0000000000000000
   Parameter[4]: 00007ffa1a000000

PROCESS_NAME:  OrderService.exe

EXCEPTION_OBJECT: !pe 1f2a5000f10
Exception object: 000001f2a5000f10
Exception type:   System.NullReferenceException
Message:          Object reference not set to an instance of an object.
InnerException:   <none>
HResult: 80004003

MANAGED_STACK_COMMAND:  !pe 1f2a5000f10

SYMBOL_NAME:  OrderService!OrderService.Pricing.Discount+1e

MODULE_NAME: OrderService

IMAGE_NAME:  OrderService.dll

FAILURE_BUCKET_ID:  CLR_EXCEPTION_System.NullReferenceException_80004003_OrderService.dll!OrderService.Pricing.Discount

Followup:     MachineOwner
---------`,
};

/**
 * A .NET deadlock: thread 5 holds account A and waits for B, thread 6 holds B and waits for A. A
 * hang dump: no exception; every thread waits in the kernel, JIT-compiled code between.
 */
export const MANAGED_DEADLOCK = {
  /** `~` */
  threadList: `.  0  Id: 1a2c.1b3c Suspend: 0 Teb: 00000000\`00356000 Unfrozen
   1  Id: 1a2c.1c08 Suspend: 0 Teb: 00000000\`00358000 Unfrozen ".NET TP Worker"
   2  Id: 1a2c.1d44 Suspend: 0 Teb: 00000000\`0035a000 Unfrozen ".NET Debugger"
   3  Id: 1a2c.2a10 Suspend: 0 Teb: 00000000\`0035c000 Unfrozen ".NET EventPipe"
   4  Id: 1a2c.2a9c Suspend: 0 Teb: 00000000\`0035e000 Unfrozen ".NET Finalizer"
   5  Id: 1a2c.2d40 Suspend: 0 Teb: 00000000\`00360000 Unfrozen
   6  Id: 1a2c.3e54 Suspend: 0 Teb: 00000000\`00362000 Unfrozen`,
  /** `~*kn 1` */
  // The main thread's registers where the dump was written: in the kernel's wait, as a hang dump's threads are.
  registers: `rax=0000000000000000 rbx=0000000000000002 rcx=00000000000001c4
rdx=000000000014f140 rsi=0000000000000000 rdi=0000000000000002
rip=00007ffb12f2d0c4 rsp=000000000014f0b8 rbp=000000000014f1c0
 r8=0000000000000000  r9=0000000000000000 r10=0000000000000000
r11=0000000000000246 r12=0000000000000000 r13=0000000000000000
r14=0000000000000000 r15=0000000000000000
iopl=0         nv up ei pl zr na po nc
cs=0033  ss=002b  ds=002b  es=002b  fs=0053  gs=002b             efl=00000246
ntdll!NtWaitForMultipleObjects+0x14:
00007ffb\`12f2d0c4 c3              ret`,
  threadsWithFrames: `.  0  Id: 1a2c.1b3c Suspend: 0 Teb: 00000000\`00356000 Unfrozen
 # Child-SP          RetAddr               Call Site
00 00000000\`0014f0b8 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14

   1  Id: 1a2c.1c08 Suspend: 0 Teb: 00000000\`00358000 Unfrozen ".NET TP Worker"
 # Child-SP          RetAddr               Call Site
00 00000000\`0024f6f8 00007ffb\`11ab1b0e     ntdll!NtRemoveIoCompletion+0x14

   2  Id: 1a2c.1d44 Suspend: 0 Teb: 00000000\`0035a000 Unfrozen ".NET Debugger"
 # Child-SP          RetAddr               Call Site
00 00000000\`0026f858 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14

   3  Id: 1a2c.2a10 Suspend: 0 Teb: 00000000\`0035c000 Unfrozen ".NET EventPipe"
 # Child-SP          RetAddr               Call Site
00 00000000\`0028fa28 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14

   4  Id: 1a2c.2a9c Suspend: 0 Teb: 00000000\`0035e000 Unfrozen ".NET Finalizer"
 # Child-SP          RetAddr               Call Site
00 00000000\`002af6c8 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14

   5  Id: 1a2c.2d40 Suspend: 0 Teb: 00000000\`00360000 Unfrozen
 # Child-SP          RetAddr               Call Site
00 00000000\`0034ef38 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14

   6  Id: 1a2c.3e54 Suspend: 0 Teb: 00000000\`00362000 Unfrozen
 # Child-SP          RetAddr               Call Site
00 00000000\`0044ef38 00007ffb\`11a9c9f0     ntdll!NtWaitForMultipleObjects+0x14`,
  /** `!threads`: the two workers hold one monitor each. */
  threads: `ThreadCount:      4
UnstartedThread:  0
BackgroundThread: 3
PendingThread:    0
DeadThread:       0
Hosted Runtime:   no
                                                                                                            Lock  
 DBG   ID     OSID ThreadOBJ           State GC Mode     GC Alloc Context                  Domain           Count Apt Exception
   0    1     1b3c 000001F2A3B4C5D0    2a020 Preemptive  000001F2A5001234:000001F2A5002000 000001f2a3b2a0e0 0     MTA 
   4    2     2a9c 000001F2A3B5E010    2b220 Preemptive  0000000000000000:0000000000000000 000001f2a3b2a0e0 0     MTA (Finalizer) 
   5    3     2d40 000001F2A3B612A0  1029220 Preemptive  000001F2A5003C18:000001F2A5004000 000001f2a3b2a0e0 1     MTA (Threadpool Worker) 
   6    4     3e54 000001F2A3B7A0F0  1029220 Preemptive  000001F2A5004D30:000001F2A5006000 000001f2a3b2a0e0 1     MTA (Threadpool Worker) `,
  syncblk: `Index         SyncBlock MonitorHeld Recursion Owning Thread Info          SyncBlock Owner
    2 000001F2A3C1D2E8            3         1 000001F2A3B612A0 2d40   5   000001f2a5001100 Bank.Account
    3 000001F2A3C1D338            3         1 000001F2A3B7A0F0 3e54   6   000001f2a5001118 Bank.Account
-----------------------------
Total           4
CCW             0
RCW             0
ComClassFactory 0
Free            0`,
  /** `~*e !clrstack -a` */
  clrstacks: `OS Thread Id: 0x1b3c (0)
        Child SP               IP Call Site
000000000014F1C8 00007ffb1345d0e4 [HelperMethodFrame_1OBJ: 000000000014f1c8] System.Threading.Monitor.ObjWait(Int32, System.Object)
000000000014F300 00007FFA1B2C3C10 Bank.Program.Main(System.String[]) [C:\\bank\\Program.cs @ 18]
    PARAMETERS:
        args (0x000000000014F340) = 0x000001f2a5000d10

OS Thread Id: 0x2d40 (5)
        Child SP               IP Call Site
000000000034F0C8 00007ffb1345d0e4 [HelperMethodFrame_1OBJ: 000000000034f0c8] System.Threading.Monitor.ReliableEnter(System.Object, Boolean ByRef)
000000000034F1F0 00007FFA1B2C4E20 Bank.Ledger.Transfer(Bank.Account, Bank.Account, Int32) [C:\\bank\\Ledger.cs @ 21]
    PARAMETERS:
        from (0x000000000034F260) = 0x000001f2a5001100
        to (0x000000000034F268) = 0x000001f2a5001118
        amount (0x000000000034F270) = 0x0000000000000064
    LOCALS:
        0x000000000034F238 = 0x000001f2a5001100
        0x000000000034F230 = 0x0000000000000001
        0x000000000034F228 = 0x000001f2a5001118
        0x000000000034F220 = 0x0000000000000000

OS Thread Id: 0x3e54 (6)
        Child SP               IP Call Site
000000000044F0C8 00007ffb1345d0e4 [HelperMethodFrame_1OBJ: 000000000044f0c8] System.Threading.Monitor.ReliableEnter(System.Object, Boolean ByRef)
000000000044F1F0 00007FFA1B2C4E20 Bank.Ledger.Transfer(Bank.Account, Bank.Account, Int32) [C:\\bank\\Ledger.cs @ 21]
    PARAMETERS:
        from (0x000000000044F260) = 0x000001f2a5001118
        to (0x000000000044F268) = 0x000001f2a5001100
        amount (0x000000000044F270) = 0x0000000000000032
    LOCALS:
        0x000000000044F238 = 0x000001f2a5001118
        0x000000000044F230 = 0x0000000000000001
        0x000000000044F228 = 0x000001f2a5001100
        0x000000000044F220 = 0x0000000000000000`,
};
