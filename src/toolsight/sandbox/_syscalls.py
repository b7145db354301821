"""The seccomp allowlist of sandboxed children, as data (imported by `_confine.py`; stdlib only).

Everything not listed is denied with EPERM. The list started from `strace -f -c` of a realistic
corpus (NumPy, Pillow, OpenCV, pandas, SciPy, scikit-learn, matplotlib, an IPython shell, threads,
asyncio, fork, shutil, tempfile, sqlite; tests/sandbox/test_seccomp_corpus.py runs it under the
filter) plus the calls those libraries make on other code paths (e.g. `statx`, `ppoll`,
`copy_file_range`). Calls that are allowed only with particular arguments (socketpair, clone,
chmod family, sendto, prlimit64, ioctl, kill) are added as argument rules in `build_seccomp`.

Deliberately absent (denied): socket, connect, bind, listen, accept, sendmsg (no networking, and
no host UNIX sockets even if one were visible), execve/execveat, ptrace, process_vm_*, SysV IPC
(shm*, msg*, sem*), inotify_*/fanotify_*, memfd_create, mount and namespace calls, setuid family,
chown family, *xattr writes, mknod, io_uring, bpf, perf_event_open, keyctl, userfaultfd, mlock,
personality, pidfd_*, kcmp, landlock_*.
"""

from __future__ import annotations

SYSCALLS_ALLOWED: tuple[str, ...] = (
    # files and directories
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
    "open", "openat", "openat2", "creat", "close", "close_range", "lseek", "fstat", "stat", "lstat",
    "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2", "getdents",
    "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat",
    "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "readlink",
    "readlinkat", "truncate", "ftruncate", "fallocate", "fsync", "fdatasync", "sync_file_range",
    "flock", "fadvise64", "readahead", "umask", "utime", "utimes", "utimensat", "futimesat",
    "sendfile", "copy_file_range", "dup", "dup2", "dup3", "fcntl", "pipe", "pipe2",
    "getxattr", "lgetxattr", "fgetxattr",
    # memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync", "mincore", "mbind",
    "get_mempolicy", "set_mempolicy",
    # threads, processes (namespace flags are filtered in build_seccomp), signals, time
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "set_tid_address", "rseq",
    "arch_prctl", "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
    "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min", "getcpu",
    "exit", "exit_group", "wait4", "waitid", "vfork", "fork",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend",
    "rt_sigtimedwait", "sigaltstack", "restart_syscall", "pause",
    "nanosleep", "clock_nanosleep", "clock_gettime", "clock_getres", "gettimeofday", "time",
    "alarm", "getitimer", "setitimer", "timer_create", "timer_settime", "timer_gettime",
    "timer_getoverrun", "timer_delete", "timerfd_create", "timerfd_settime", "timerfd_gettime",
    # identity and limits (reading only)
    "getpid", "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid", "getgroups",
    "getresuid", "getresgid", "getpgrp", "getpgid", "getsid", "getrlimit", "getrusage", "times",
    "sysinfo", "uname", "getpriority", "getrandom", "capget",
    # event loops (asyncio, selectors); sockets only from socketpair(AF_UNIX, SOCK_STREAM)
    "select", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
    "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "signalfd", "signalfd4",
    "recvfrom", "recvmsg", "recvmmsg", "shutdown", "getsockname", "getpeername", "getsockopt",
    "setsockopt",
)

# Denied with EOPNOTSUPP instead of EPERM: callers such as shutil.copy2 treat "not supported" as
# "nothing to copy" and go on, but raise on EPERM.
SYSCALLS_ENOTSUP: tuple[str, ...] = (
    "listxattr", "llistxattr", "flistxattr", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
    "lremovexattr", "fremovexattr",
)

# Denied with ENOSYS: glibc then falls back to the older call, which seccomp can filter by argument.
SYSCALLS_ENOSYS: tuple[str, ...] = ("clone3", "fchmodat2")

# ioctl requests allowed (terminal queries, close-on-exec, non-blocking, bytes readable)
IOCTL_ALLOWED: tuple[int, ...] = (
    0x5401,  # TCGETS (isatty)
    0x5413,  # TIOCGWINSZ (terminal size)
    0x5451,  # FIOCLEX
    0x5450,  # FIONCLEX
    0x5421,  # FIONBIO
    0x541B,  # FIONREAD
)
