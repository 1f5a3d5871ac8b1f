"""The worker boundary: the second layer, the one that holds against a hostile worker.

A worker process forked from the kernel, confined by the OS, killed at its deadline; nothing it sends is trusted.

* ``process``    -- the worker process seen from the host: fork, poll, kill, reap, describe its end.
* ``scratch``    -- the worker's scratch directory, locked while its kernel lives; a killed kernel's is swept.
* ``landlock``   -- Landlock through its system calls (ctypes).
* ``seccomp``    -- the worker's seccomp-BPF filter (an allow-list), assembled by hand.
* ``syscalls``   -- the reviewed system-call allow-list: names, argument rules and reasons; x86_64/aarch64 numbers.
* ``lifetime``   -- every fork on one long-lived thread; the worker's parent-death SIGKILL (dies with the kernel).
* ``rlimits``    -- the worker's resource limits, clamped to the inherited hard limits (with a notice).
* ``confine``    -- the confinement plan (computed in the host) and its application in the worker.
* ``netns``      -- the worker's own network namespace, and its relay to the host's proxy (worker side).
* ``proxy``      -- the host's CONNECT proxy: the policy (public addresses, allow_domains), every connection noted.
* ``addresses``  -- which IP addresses are public: the reviewed ranges (6to4, Teredo, NAT64 refused outright).
* ``streams``    -- copy between two sockets without blocking, with send and idle deadlines (proxy and relay).
* ``denied``     -- in the worker: what the OS refused the code (a file read or write, a socket), from its error.
* ``refusals``   -- in the host: the worker's refusal claims checked and bounded; what is never granted.
* ``grants``     -- a person's grants after a refusal, checked again: the paths, the network, a proxy connection.
* ``secrets``    -- the kernel's secrets cleared in the fork: session key, connection, history, API credentials, argv.
* ``wipe``       -- mask given byte strings in the worker's private writable memory, never in the data the agent sees.
* ``unchanged``  -- the kernel's memory a worker found free of its secrets, less what it wrote since: not searched again.
* ``written``    -- which pages the kernel wrote since it last asked (userfaultfd write-protection, PAGEMAP_SCAN).
* ``spans``      -- sets of addresses as sorted ranges, and their form on the wire.
* ``mappings``   -- /proc/self/maps, and the kernel's shared file mappings made private in the worker.
* ``figures``    -- matplotlib in the worker: Agg backend, new figures taken as images.
* ``namespace``  -- how the host sends the notebook's values to the worker (pickle: the trusted direction).
* ``worker``     -- the worker process: cut ties to the kernel, confine, serve calls.
* ``watch``      -- one call seen from the host: deadlines, one ``ran``, the budget, the final answers it gave.
* ``isolated``   -- IsolatedPythonExecutor, the host side: fork, sync, wait, decode, tools, limits from outside.
"""
