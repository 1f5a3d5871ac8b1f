"""The worker's system calls, reviewed one by one: what is allowed, what only with some arguments, and why.

How it was derived: ``scripts/record_syscalls.py`` runs real workloads in a forked, confined worker under ``strace``
(numpy, pandas' read_csv/groupby/merge/to_datetime/resample/plotting, matplotlib saving PNG/PDF/SVG, PIL, the stdlib:
asyncio, tempfile, sqlite3, gzip, json, decimal, threads and thread pools, and requests/urllib over TCP), with the
guards on and off, and lists every call made after the filter is installed. Each was then reviewed: kept when the
workloads need it and it reaches nothing outside the worker that Landlock does not already decide, restricted by
argument where it can (:data:`CONDITIONAL`, enforced in seccomp.py), dropped otherwise. A few calls were kept without
being recorded, for the error paths and libraries of the same kind (``pread``/``pwrite`` variants, ``statx``,
``epoll_pwait2``, POSIX timers...). Everything else fails with ``EPERM`` (:data:`DENIED` names the reviewed refusals).

The tables are by name; :data:`NUMBERS` gives the numbers for x86_64 and aarch64 (a name missing there does not
exist on that architecture).
"""

from __future__ import annotations

#: Allowed as such, by group: group -> (why, names).
ALLOWED: dict[str, tuple[str, str]] = {
    "memory": (
        "the allocator, numpy's buffers, thread stacks, memory maps of files; OpenBLAS binds its buffers (mbind)",
        "brk mmap munmap mremap mprotect madvise msync mbind get_mempolicy",
    ),
    "files, reading": (
        "reading what Landlock lets the worker read (Landlock decides which paths; these calls only use them)",
        "read readv pread64 preadv preadv2 lseek open openat close close_range fstat stat lstat newfstatat statx "
        "statfs fstatfs access faccessat faccessat2 readlink readlinkat getdents64 getcwd chdir fchdir fadvise64",
    ),
    "files, writing": (
        "writing in the scratch directory and allow_write (Landlock decides where); shutil copies with sendfile or "
        "copy_file_range; sqlite and filelock take locks",
        "write writev pwrite64 pwritev pwritev2 ftruncate truncate fallocate fsync fdatasync mkdir mkdirat rmdir "
        "unlink unlinkat rename renameat renameat2 sendfile copy_file_range flock umask",
    ),
    "descriptors": (
        "duplicating descriptors, pipes and event counters inside the worker (fcntl, ioctl: see CONDITIONAL)",
        "dup dup2 dup3 pipe pipe2 eventfd2",
    ),
    "waiting": (
        "select/poll/epoll: asyncio, the channel to the host, sockets with a timeout",
        "poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2",
    ),
    "time": (
        "clocks, sleeps, the step's deadline timer (setitimer) and POSIX timers (they signal the process itself)",
        "clock_gettime clock_getres gettimeofday time nanosleep clock_nanosleep setitimer getitimer alarm "
        "timer_create timer_settime timer_gettime timer_getoverrun timer_delete times getrusage",
    ),
    "threads": (
        "threads and their synchronisation (clone: threads only, see CONDITIONAL); restart_syscall and the exits "
        "are needed by every process",
        "futex set_robust_list rseq set_tid_address gettid sched_yield exit exit_group restart_syscall",
    ),
    "signals": (
        "the worker's own handlers and masks (sending: kill/tgkill to itself only, see CONDITIONAL)",
        "rt_sigaction rt_sigprocmask rt_sigreturn sigaltstack rt_sigsuspend rt_sigtimedwait rt_sigpending pause",
    ),
    "identity": (
        "reading who and where the process is: ids, uname, the machine's size, random bytes; arch_prctl sets the "
        "process's own CPU state (x86_64: TLS, AMX permission)",
        "getpid getppid getuid geteuid getgid getegid getresuid getresgid getgroups getpgrp uname sysinfo getcpu "
        "getrandom getrlimit arch_prctl",
    ),
    "sockets": (
        "using a socket the worker has (the channel to the host; with a grant, a TCP socket, which Landlock or the "
        "network namespace decides where it may connect); creating, accepting, sending: see CONDITIONAL. sendmsg "
        "is left out: its destination address cannot be checked",
        "connect getsockopt setsockopt getsockname getpeername recvfrom recvmsg recvmmsg shutdown",
    ),
}

#: Allowed only with these arguments (enforced in seccomp.py): name -> the rule.
CONDITIONAL: dict[str, str] = {
    "clone": "threads only: CLONE_THREAD set and no namespace flag (a new process is EPERM)",
    "clone3": "ENOSYS, so that glibc falls back to clone, whose flags a filter can read",
    "socket": "with a network grant only: AF_INET/AF_INET6, SOCK_STREAM (NONBLOCK/CLOEXEC aside), protocol 0 or 6",
    "socketpair": "AF_UNIX only (asyncio's self-pipe): a connected pair nobody else can reach",
    "accept4": "only on the one descriptor given to build() (the network relay's listener)",
    "sendto": "without a destination address (a connected socket; no connect by TCP Fast Open)",
    "kill": "to the worker itself",
    "tgkill": "to the worker's own threads",
    "prlimit64": "pid 0 (the worker itself)",
    "getpgid": "pid 0 or the worker itself",
    "getsid": "pid 0 or the worker itself",
    "sched_getaffinity": "pid 0 or the worker itself (os.cpu_count, OpenBLAS)",
    "sched_getparam": "pid 0 or the worker itself",
    "sched_getscheduler": "pid 0 or the worker itself",
    "prctl": "harmless options (thread names, reading state); never PR_SET_PDEATHSIG, PR_SET_DUMPABLE, "
    "PR_SET_SECCOMP, PR_SET_PTRACER, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER...",
    "ioctl": "terminal queries and descriptor flags only: TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX",
    "fcntl": "descriptor flags and file locks; never F_SETOWN/F_SETOWN_EX/F_SETSIG/F_SETLEASE/F_NOTIFY (they make "
    "the kernel signal another process)",
}

#: Denied on purpose, by reason (everything not named above is denied as well; these are the reviewed refusals).
DENIED: dict[str, str] = {
    "System V IPC: objects outlive the worker and the kernel, and other processes' objects are readable": (
        "shmget shmat shmdt shmctl semget semop semtimedop semctl msgget msgsnd msgrcv msgctl"
    ),
    "POSIX message queues: objects that outlive the worker": (
        "mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr"
    ),
    "leaving the kernel's lifetime (a session or process group of its own)": "setsid setpgid",
    "servers": "bind listen accept",
    "new processes and programs": "fork vfork execve execveat",
    "other processes": (
        "ptrace process_vm_readv process_vm_writev pidfd_open pidfd_send_signal pidfd_getfd tkill rt_sigqueueinfo "
        "rt_tgsigqueueinfo kcmp wait4 waitid"
    ),
    "the kernel's attack surface": (
        "io_uring_setup io_uring_enter io_uring_register bpf userfaultfd perf_event_open memfd_create memfd_secret "
        "seccomp landlock_create_ruleset"
    ),
    "file metadata Landlock does not cover (the same user's files outside the grants: chmod ~/.ssh, say)": (
        "chmod fchmod fchmodat fchown chown lchown fchownat utimensat utime utimes futimesat link linkat symlink "
        "symlinkat mknod mknodat setxattr lsetxattr fsetxattr removexattr getxattr listxattr"
    ),
    "credentials and administration": (
        "setuid setgid setreuid setregid setresuid setresgid setfsuid setfsgid setgroups capset unshare setns mount "
        "umount2 pivot_root chroot sched_setaffinity setpriority"
    ),
}

# x86_64: arch/x86/entry/syscalls/syscall_64.tbl; aarch64: include/uapi/asm-generic/unistd.h (newfstatat is fstatat).
# fmt: off
NUMBERS: dict[str, dict[str, int]] = {
    "x86_64": {
        "read": 0, "write": 1, "open": 2, "close": 3, "stat": 4, "fstat": 5, "lstat": 6, "poll": 7, "lseek": 8,
        "mmap": 9, "mprotect": 10, "munmap": 11, "brk": 12, "rt_sigaction": 13, "rt_sigprocmask": 14,
        "rt_sigreturn": 15, "ioctl": 16, "pread64": 17, "pwrite64": 18, "readv": 19, "writev": 20, "access": 21,
        "pipe": 22, "select": 23, "sched_yield": 24, "mremap": 25, "msync": 26, "madvise": 28, "shmget": 29,
        "shmat": 30, "shmctl": 31, "dup": 32, "dup2": 33, "pause": 34, "nanosleep": 35, "getitimer": 36, "alarm": 37,
        "setitimer": 38, "getpid": 39, "sendfile": 40, "socket": 41, "connect": 42, "accept": 43, "sendto": 44,
        "recvfrom": 45, "recvmsg": 47, "shutdown": 48, "bind": 49, "listen": 50, "getsockname": 51, "getpeername": 52,
        "socketpair": 53, "setsockopt": 54, "getsockopt": 55, "clone": 56, "fork": 57, "vfork": 58, "execve": 59,
        "exit": 60, "wait4": 61, "kill": 62, "uname": 63, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67,
        "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "fcntl": 72, "flock": 73, "fsync": 74,
        "fdatasync": 75, "truncate": 76, "ftruncate": 77, "getcwd": 79, "chdir": 80, "fchdir": 81, "rename": 82,
        "mkdir": 83, "rmdir": 84, "link": 86, "unlink": 87, "symlink": 88, "readlink": 89, "chmod": 90, "fchmod": 91,
        "chown": 92, "fchown": 93, "lchown": 94, "umask": 95, "gettimeofday": 96, "getrlimit": 97, "getrusage": 98,
        "sysinfo": 99, "times": 100, "ptrace": 101, "getuid": 102, "getgid": 104, "setuid": 105, "setgid": 106,
        "geteuid": 107, "getegid": 108, "setpgid": 109, "getppid": 110, "getpgrp": 111, "setsid": 112,
        "setreuid": 113, "setregid": 114, "getgroups": 115, "setgroups": 116, "setresuid": 117, "getresuid": 118,
        "setresgid": 119, "getresgid": 120, "getpgid": 121, "setfsuid": 122, "setfsgid": 123, "getsid": 124,
        "capset": 126, "rt_sigpending": 127, "rt_sigtimedwait": 128, "rt_sigqueueinfo": 129, "rt_sigsuspend": 130,
        "sigaltstack": 131, "utime": 132, "mknod": 133, "statfs": 137, "fstatfs": 138, "setpriority": 141,
        "sched_getparam": 143, "sched_getscheduler": 145, "pivot_root": 155, "prctl": 157, "arch_prctl": 158,
        "chroot": 161, "mount": 165, "umount2": 166, "gettid": 186, "setxattr": 188, "lsetxattr": 189,
        "fsetxattr": 190, "getxattr": 191, "listxattr": 194, "removexattr": 197, "tkill": 200, "time": 201,
        "futex": 202, "sched_setaffinity": 203, "sched_getaffinity": 204, "epoll_create": 213, "getdents64": 217,
        "set_tid_address": 218, "restart_syscall": 219, "semtimedop": 220, "fadvise64": 221, "timer_create": 222,
        "timer_settime": 223, "timer_gettime": 224, "timer_getoverrun": 225, "timer_delete": 226,
        "clock_gettime": 228, "clock_getres": 229, "clock_nanosleep": 230, "exit_group": 231, "epoll_wait": 232,
        "epoll_ctl": 233, "tgkill": 234, "utimes": 235, "mbind": 237, "get_mempolicy": 239, "mq_open": 240,
        "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
        "waitid": 247, "openat": 257, "mkdirat": 258, "mknodat": 259, "fchownat": 260, "futimesat": 261,
        "newfstatat": 262, "unlinkat": 263, "renameat": 264, "linkat": 265, "symlinkat": 266, "readlinkat": 267,
        "fchmodat": 268, "faccessat": 269, "pselect6": 270, "ppoll": 271, "unshare": 272, "set_robust_list": 273,
        "utimensat": 280, "epoll_pwait": 281, "fallocate": 285, "accept4": 288, "eventfd2": 290, "epoll_create1": 291,
        "dup3": 292, "pipe2": 293, "preadv": 295, "pwritev": 296, "rt_tgsigqueueinfo": 297, "perf_event_open": 298,
        "recvmmsg": 299, "prlimit64": 302, "setns": 308, "getcpu": 309, "process_vm_readv": 310,
        "process_vm_writev": 311, "kcmp": 312, "renameat2": 316, "seccomp": 317, "getrandom": 318,
        "memfd_create": 319, "bpf": 321, "execveat": 322, "userfaultfd": 323, "copy_file_range": 326, "preadv2": 327,
        "pwritev2": 328, "statx": 332, "rseq": 334, "pidfd_send_signal": 424, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "pidfd_open": 434, "clone3": 435, "close_range": 436,
        "pidfd_getfd": 438, "faccessat2": 439, "epoll_pwait2": 441, "landlock_create_ruleset": 444,
        "memfd_secret": 447,
    },
    "aarch64": {
        "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "getxattr": 8, "listxattr": 11, "removexattr": 14,
        "getcwd": 17, "eventfd2": 19, "epoll_create1": 20, "epoll_ctl": 21, "epoll_pwait": 22, "dup": 23, "dup3": 24,
        "fcntl": 25, "ioctl": 29, "flock": 32, "mknodat": 33, "mkdirat": 34, "unlinkat": 35, "symlinkat": 36,
        "linkat": 37, "renameat": 38, "umount2": 39, "mount": 40, "pivot_root": 41, "statfs": 43, "fstatfs": 44,
        "truncate": 45, "ftruncate": 46, "fallocate": 47, "faccessat": 48, "chdir": 49, "fchdir": 50, "chroot": 51,
        "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "openat": 56, "close": 57, "pipe2": 59,
        "getdents64": 61, "lseek": 62, "read": 63, "write": 64, "readv": 65, "writev": 66, "pread64": 67,
        "pwrite64": 68, "preadv": 69, "pwritev": 70, "sendfile": 71, "pselect6": 72, "ppoll": 73, "readlinkat": 78,
        "newfstatat": 79, "fstat": 80, "fsync": 82, "fdatasync": 83, "utimensat": 88, "capset": 91, "exit": 93,
        "exit_group": 94, "waitid": 95, "set_tid_address": 96, "unshare": 97, "futex": 98, "set_robust_list": 99,
        "nanosleep": 101, "getitimer": 102, "setitimer": 103, "timer_create": 107, "timer_gettime": 108,
        "timer_getoverrun": 109, "timer_settime": 110, "timer_delete": 111, "clock_gettime": 113, "clock_getres": 114,
        "clock_nanosleep": 115, "ptrace": 117, "sched_getscheduler": 120, "sched_getparam": 121,
        "sched_setaffinity": 122, "sched_getaffinity": 123, "sched_yield": 124, "restart_syscall": 128, "kill": 129,
        "tkill": 130, "tgkill": 131, "sigaltstack": 132, "rt_sigsuspend": 133, "rt_sigaction": 134,
        "rt_sigprocmask": 135, "rt_sigpending": 136, "rt_sigtimedwait": 137, "rt_sigqueueinfo": 138,
        "rt_sigreturn": 139, "setpriority": 140, "setregid": 143, "setgid": 144, "setreuid": 145, "setuid": 146,
        "setresuid": 147, "getresuid": 148, "setresgid": 149, "getresgid": 150, "setfsuid": 151, "setfsgid": 152,
        "times": 153, "setpgid": 154, "getpgid": 155, "getsid": 156, "setsid": 157, "getgroups": 158,
        "setgroups": 159, "uname": 160, "getrlimit": 163, "getrusage": 165, "umask": 166, "prctl": 167, "getcpu": 168,
        "gettimeofday": 169, "getpid": 172, "getppid": 173, "getuid": 174, "geteuid": 175, "getgid": 176,
        "getegid": 177, "gettid": 178, "sysinfo": 179, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182,
        "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185, "msgget": 186, "msgctl": 187, "msgrcv": 188,
        "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193, "shmget": 194, "shmctl": 195,
        "shmat": 196, "shmdt": 197, "socket": 198, "socketpair": 199, "bind": 200, "listen": 201, "accept": 202,
        "connect": 203, "getsockname": 204, "getpeername": 205, "sendto": 206, "recvfrom": 207, "setsockopt": 208,
        "getsockopt": 209, "shutdown": 210, "recvmsg": 212, "brk": 214, "munmap": 215, "mremap": 216, "clone": 220,
        "execve": 221, "mmap": 222, "fadvise64": 223, "mprotect": 226, "msync": 227, "madvise": 233, "mbind": 235,
        "get_mempolicy": 236, "rt_tgsigqueueinfo": 240, "perf_event_open": 241, "accept4": 242, "recvmmsg": 243,
        "wait4": 260, "prlimit64": 261, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
        "renameat2": 276, "seccomp": 277, "getrandom": 278, "memfd_create": 279, "bpf": 280, "execveat": 281,
        "userfaultfd": 282, "copy_file_range": 285, "preadv2": 286, "pwritev2": 287, "statx": 291, "rseq": 293,
        "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "pidfd_open": 434, "clone3": 435, "close_range": 436, "pidfd_getfd": 438, "faccessat2": 439,
        "epoll_pwait2": 441, "landlock_create_ruleset": 444, "memfd_secret": 447,
    },
}
# fmt: on


def allowed_names() -> list[str]:
    """Every name allowed without an argument check."""
    return [name for _, names in ALLOWED.values() for name in names.split()]


def denied_names() -> list[str]:
    return [name for names in DENIED.values() for name in names.split()]


def numbers(machine: str) -> dict[str, int]:
    """Name -> number on ``machine`` (``platform.machine()``); KeyError for an architecture without a table."""
    return NUMBERS[machine]
