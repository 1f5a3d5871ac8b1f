"""The in-process guards: the first layer, a usability layer against a mistaken model (not a hostile one).

They run inside the isolated worker (clear refusals, protected tools) and alone as ``LocalPythonExecutor`` for
trusted use. Every chain a security review found started by getting past them; the boundary (``..boundary``) is
what holds.

* ``policy``     -- every rule about what agent code may do (imports, builtins, attributes, per-module denials,
  which names the notebook and the agent share).
* ``scopes``     -- which names each scope of the code binds (for the rewrite).
* ``rewrite``    -- parse, check, rewrite the code into one guarded function.
* ``allocation`` -- the ``*``/``**``/``<<`` allocation guard.
* ``modules``    -- read-only module views and checked wrappers of a few library functions.
* ``frontend``   -- live widgets, comms and the kernel's traitlets objects: read-only, their mutating methods refused.
* ``pandas_calls`` -- pandas' string dispatch (``agg("eval")``...), ``eval``/``query`` and the Styler, checked.
* ``runtime``    -- the runtime guards the rewritten code calls.
* ``limits``     -- timeouts, stop requests, operation budget, recursion and memory limits of a call.
* ``capture``    -- print capture into a capped buffer (with a hook for streaming).
* ``copies``     -- ``copy_inputs`` for the local executor: the code works on copies of the notebook's objects.
* ``statement_value`` -- smolagents' value of the code (a trailing assignment's too), for its compat API.
* ``executor``   -- PythonExecutor (the base of both executors), LocalPythonExecutor and CodeOutput.
"""
