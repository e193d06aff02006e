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
