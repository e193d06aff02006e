/** The Linux names of signals and of their si_code values. */

const SIGNALS: Record<number, string> = {
  1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
  8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
  14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP",
  20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
  26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
};

export function signalName(signo: number): string {
  return SIGNALS[signo] ?? `SIG${signo}`;
}

const GENERIC_CODES: Record<number, string> = {
  0: "SI_USER", 128: "SI_KERNEL", [-1]: "SI_QUEUE", [-2]: "SI_TIMER", [-3]: "SI_MESGQ",
  [-4]: "SI_ASYNCIO", [-5]: "SI_SIGIO", [-6]: "SI_TKILL",
};

const FAULT_CODES: Record<string, string[]> = {
  SIGSEGV: ["SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR"],
  SIGBUS: ["BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"],
  SIGFPE: ["FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF", "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB"],
  SIGILL: ["ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP", "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK"],
  SIGTRAP: ["TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH", "TRAP_HWBKPT"],
};

/** si_code values 1.. are per signal; zero and negative values say who sent the signal. */
export function signalCodeName(signo: number, code: number): string {
  const perSignal = code > 0 && code < 128 ? FAULT_CODES[signalName(signo)]?.[code - 1] : undefined;
  return perSignal ?? GENERIC_CODES[code] ?? String(code);
}

/** A general-protection fault: a non-canonical address, which the kernel reports as 0. */
export const SI_KERNEL = 0x80;
/** Codes of a signal sent by a process rather than raised by the CPU: kill(), sigqueue(), tgkill(). */
export const SI_USER = 0;
export const SI_QUEUE = -1;
export const SI_TKILL = -6;
/** SIGTRAP's code for a breakpoint trap (`brk` on arm64; int3 reports SI_KERNEL on x86). */
export const TRAP_BRKPT = 1;

export const SIGILL = 4;
export const SIGTRAP = 5;
export const SIGABRT = 6;
export const SIGBUS = 7;
export const SIGFPE = 8;
export const SIGSEGV = 11;
export const SIGSTOP = 19;
/** Signals the CPU raises for the instruction it ran. */
export const FAULT_SIGNALS = new Set([SIGILL, SIGBUS, SIGFPE, SIGSEGV]);

/** Whether a signal was sent by a process (another one, or the process itself) instead of a fault. */
export function sentByProcess(siginfo: { code: number } | null | undefined): boolean {
  return siginfo !== null && siginfo !== undefined && (siginfo.code === SI_USER || siginfo.code === SI_QUEUE || siginfo.code === SI_TKILL);
}
