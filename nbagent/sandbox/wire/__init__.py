"""The wire between the worker and the host: plain data, frames, handles, and the words for what changed.

The lowest room of the sandbox: both layers above speak it, and it trusts nothing it reads.

* ``codec``    -- plain data without pickle (JSON tree + raw buffers, each object once): what travels and how.
* ``plain``    -- the format's vocabulary: its limits, its errors, AgentValue.
* ``encoding`` -- the worker's side: each object once, aliases as references, within the budget it was told.
* ``decoding`` -- the host's side: values rebuilt without the worker's code, bounded in size and time.
* ``pandas_values`` -- both sides for pandas' periods and intervals (scalars and columns) and index frequencies.
* ``channel``  -- framed messages over the socket pair, read resumably, with deadlines and per-kind size caps.
* ``shared``   -- large buffers in sealed memory files (memfd) the host creates, the worker fills, the host maps.
* ``budget``   -- what decoded data may cost the host: per call, over steps; frame caps by kind.
* ``proxies``  -- handles and function/class proxies the notebook holds for objects left in the worker; whether an
  answer is still one (``is_worker_handle``) and what to write instead (``handle_advice``).
* ``changes``  -- what a call did to the shared namespace (created, rebound, changed in place, deleted), in words.
* ``capabilities`` -- what the boundary refused the code (RefusedCapability) and what a person granted (Grant).
* ``visibility`` -- which notebook names the code sees (the task's, its own, granted ones); what a credential is.
"""
