"""A seccomp-BPF system-call filter, assembled by hand (no libseccomp): what the worker process may not ask the kernel.

Denied (``EPERM``): starting programs or processes (``execve``, ``fork``, ``clone`` without ``CLONE_THREAD``; ``clone3``
answers ``ENOSYS`` so that threads fall back to ``clone``), reaching other processes (``ptrace``, ``process_vm_*``,
``pidfd_*``, ``kill``/``tgkill``/``prlimit64`` aimed at another process), sockets (``socket`` entirely, or all but
``AF_INET``/``AF_INET6`` when the network is granted), and the administrative calls (mounts, namespaces, modules,
BPF, keyrings, ``io_uring``, ``userfaultfd``...). Everything else is allowed. Another architecture is killed.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import socket
import struct

# fmt: off
_DENIED_NAMES = (
    "execve execveat fork vfork ptrace process_vm_readv process_vm_writev pidfd_open pidfd_send_signal pidfd_getfd "
    "tkill mount umount2 pivot_root chroot setns unshare bpf perf_event_open kexec_load kexec_file_load init_module "
    "finit_module delete_module reboot swapon swapoff acct keyctl add_key request_key userfaultfd io_uring_setup "
    "io_uring_enter io_uring_register open_by_handle_at name_to_handle_at kcmp ioperm iopl syslog personality "
    "fanotify_init move_mount open_tree fsopen fsconfig fsmount fspick mount_setattr quotactl quotactl_fd "
    "settimeofday clock_settime adjtimex clock_adjtime process_madvise setpriority migrate_pages move_pages vhangup "
    "sethostname setdomainname"
).split()

_TABLES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {
        "socket": 41, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62, "ptrace": 101,
        "syslog": 103, "personality": 135, "setpriority": 141, "vhangup": 153, "pivot_root": 155, "adjtimex": 159,
        "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167,
        "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
        "init_module": 175, "delete_module": 176, "quotactl": 179, "tkill": 200, "clock_settime": 227,
        "tgkill": 234, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250, "migrate_pages": 256,
        "unshare": 272, "move_pages": 279, "perf_event_open": 298, "fanotify_init": 300, "prlimit64": 302,
        "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308,
        "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313,
        "kexec_file_load": 320, "bpf": 321, "execveat": 322, "userfaultfd": 323, "pidfd_send_signal": 424,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
        "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_open": 434,
        "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443,
    }),
    "aarch64": (0xC00000B7, {
        "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51, "vhangup": 58, "quotactl": 60, "acct": 89,
        "personality": 92, "unshare": 97, "kexec_load": 104, "init_module": 105, "delete_module": 106,
        "clock_settime": 112, "syslog": 116, "ptrace": 117, "kill": 129, "tkill": 130, "tgkill": 131,
        "setpriority": 140, "reboot": 142, "sethostname": 161, "setdomainname": 162, "adjtimex": 171,
        "socket": 198, "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220, "execve": 221,
        "swapon": 224, "swapoff": 225, "migrate_pages": 238, "move_pages": 239, "perf_event_open": 241,
        "prlimit64": 261, "fanotify_init": 262, "name_to_handle_at": 264, "open_by_handle_at": 265,
        "clock_adjtime": 266, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
        "finit_module": 273, "bpf": 280, "execveat": 281, "userfaultfd": 282, "kexec_file_load": 294,
        "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
        "quotactl_fd": 443,
    }),
}
# fmt: on

_LD_W_ABS, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06
_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_CLONE_THREAD = 0x00010000
_NR, _ARCH = 0, 4


def _arg(index: int) -> int:
    return 16 + 8 * index  # the low 32 bits (little-endian)


class _Program:
    """A tiny assembler: instructions with symbolic jump targets, resolved at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int, int | str, int | str]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, offset, 0, 0))

    def jump(self, op: int, value: int, true: int | str = 0, false: int | str = 0) -> None:
        self.code.append((op, value, true, false))

    def ret(self, value: int) -> None:
        self.code.append((_RET, value, 0, 0))

    def assemble(self) -> bytes:
        out = b""
        for index, (op, k, jt, jf) in enumerate(self.code):
            true, false = (self.labels[t] - index - 1 if isinstance(t, str) else t for t in (jt, jf))
            if not (0 <= true <= 255 and 0 <= false <= 255):
                raise ValueError("seccomp program jump out of range")
            out += struct.pack("<HBBI", op, true, false, k & 0xFFFFFFFF)
        return out


def supported() -> bool:
    return platform.machine() in _TABLES


def build(pid: int, *, allow_network: bool) -> bytes:
    """The filter for the process ``pid`` (signals and rlimits only to itself)."""
    arch, table = _TABLES[platform.machine()]
    p = _Program()
    p.load(_ARCH)
    p.jump(_JEQ, arch, 0, "kill")
    p.load(_NR)
    if platform.machine() == "x86_64":
        p.jump(_JGE, 0x40000000, "deny", 0)  # the x32 ABI
    for name in _DENIED_NAMES:
        if name in table:
            p.jump(_JEQ, table[name], "deny", 0)
    p.jump(_JEQ, table["clone"], "clone", 0)
    p.jump(_JEQ, table["clone3"], "nosys", 0)
    p.jump(_JEQ, table["socket"], "socket", 0)
    p.jump(_JEQ, table["kill"], "self_pid", 0)
    p.jump(_JEQ, table["tgkill"], "self_pid", 0)
    p.jump(_JEQ, table["prlimit64"], "rlimit", 0)
    p.ret(_RET_ALLOW)
    p.label("clone")
    p.load(_arg(0))
    p.jump(_JSET, _CLONE_THREAD, "allow", "deny")
    p.label("socket")
    if allow_network:
        p.load(_arg(0))
        p.jump(_JEQ, socket.AF_INET, "allow", 0)
        p.jump(_JEQ, socket.AF_INET6, "allow", "deny")
    else:
        p.ret(_RET_ERRNO | errno.EACCES)
    p.label("rlimit")
    p.load(_arg(0))
    p.jump(_JEQ, 0, "allow", 0)
    p.label("self_pid")
    p.load(_arg(0))
    p.jump(_JEQ, pid, "allow", "deny")
    p.label("allow")
    p.ret(_RET_ALLOW)
    p.label("deny")
    p.ret(_RET_ERRNO | errno.EPERM)
    p.label("nosys")
    p.ret(_RET_ERRNO | errno.ENOSYS)
    p.label("kill")
    p.ret(_RET_KILL_PROCESS)
    return p.assemble()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(program: bytes) -> None:
    """Install ``program`` for the calling thread and its future threads (``no_new_privs`` must be set)."""
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "installing the seccomp filter failed")
