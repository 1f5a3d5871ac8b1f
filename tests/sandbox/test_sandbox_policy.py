"""The policy suite: attack snippets a mistaken or prompt-injected model could write, against both executors.

Every attack must be refused (the call raises ExecutionError, or for the exception tricks the call ends the way the
sandbox decides) AND leave the kernel fine: no file created, no secret leaked, the tool intact, the namespace intact,
and the next call works.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor, PolicyError

EXECUTORS = {"local": LocalPythonExecutor, "isolated": IsolatedPythonExecutor}

SECRET = "nbagent-sandbox-secret-4c2f9"


@dataclass
class Attack:
    category: str
    code: str
    imports: tuple[str, ...] = ()
    expect: str = "refused"  # "refused" (PolicyError), "error" (any ExecutionError), "final" (ends as final answer)
    options: dict[str, Any] = field(default_factory=dict)


ATTACKS: dict[str, Attack] = {
    # --- import bypass
    "import os": Attack("import bypass", "import os\nos.system('touch CANARY')"),
    "import subprocess": Attack("import bypass", "import subprocess\nsubprocess.run(['touch', 'CANARY'])"),
    "subprocess even with *": Attack("import bypass", "import subprocess", imports=("*",)),
    "ctypes even with *": Attack("import bypass", "import ctypes\nctypes.CDLL(None).system(b'touch CANARY')", ("*",)),
    "__import__": Attack("import bypass", "__import__('os').system('touch CANARY')"),
    "from os import system": Attack("import bypass", "from os import system\nsystem('touch CANARY')"),
    "importlib": Attack("import bypass", "import importlib\nimportlib.import_module('os')", ("importlib",)),
    "builtins module": Attack("import bypass", "import builtins\nbuiltins.eval('1')", ("builtins",)),
    "relative import": Attack("import bypass", "from . import os"),
    "module as attribute of allowed module": Attack("import bypass", "import queue\nqueue.threading.Thread"),
    "private module attribute": Attack("import bypass", "import random\nrandom._os.system('touch CANARY')"),
    "submodule of allowed module": Attack("import bypass", "import re\nre.enum.sys.modules['os']"),
    "from-import of a private name": Attack("import bypass", "from random import _os"),
    # --- attribute / dunder walking
    "subclasses walk": Attack("attribute walking", "[c for c in ().__class__.__bases__[0].__subclasses__()]"),
    "object subclasses": Attack("attribute walking", "object.__subclasses__()"),
    "function globals": Attack("attribute walking", "def f(): pass\nf.__globals__['__builtins__']"),
    "function code": Attack("attribute walking", "def f(): pass\nf.__code__.co_consts"),
    "closure cells": Attack(
        "attribute walking", "def f():\n    x = 1\n    return lambda: x\nf().__closure__[0].cell_contents"
    ),
    "getattr dunder": Attack("attribute walking", "getattr(getattr((), '__class__'), '__bases__')"),
    "getattribute bypass": Attack("attribute walking", "object.__getattribute__(1, '__class__')"),
    "setattr defaults": Attack("attribute walking", "def f(x=1): return x\nsetattr(f, '__defaults__', (2,))"),
    "augmented assignment on dunder": Attack("attribute walking", "class C: pass\nc = C()\nc.__dict__ |= {'x': 1}"),
    "class dict": Attack("attribute walking", "type.__dict__['__subclasses__'](object)"),
    "attrgetter": Attack(
        "attribute walking", "import operator\noperator.attrgetter('__class__.__bases__')(1)", ("operator",)
    ),
    "methodcaller": Attack(
        "attribute walking", "import operator\noperator.methodcaller('__reduce_ex__', 2)(1)", ("operator",)
    ),
    "attrgetter format": Attack(
        "format strings", "import operator\noperator.attrgetter('format')('{0.__class__}')(1)", ("operator",)
    ),
    "match class attribute": Attack("attribute walking", "match 1:\n    case int(__class__=c): pass"),
    "private attribute of a library object": Attack("attribute walking", "import random\nrandom.Random()._randbelow"),
    # --- builtins recovery
    "eval": Attack("builtins recovery", "eval('1 + 1')"),
    "exec": Attack("builtins recovery", "exec('import os')"),
    "compile": Attack("builtins recovery", "compile('1', 'x', 'eval')"),
    "globals": Attack("builtins recovery", "globals()['__builtins__']"),
    "vars and locals": Attack("builtins recovery", "vars()"),
    "__builtins__ name": Attack("builtins recovery", "__builtins__['eval']('1')"),
    "bound builtin self": Attack("builtins recovery", "print.__self__.eval('1')"),
    "breakpoint / input": Attack("builtins recovery", "breakpoint()"),
    "input": Attack("builtins recovery", "input('?')"),
    "exit": Attack("builtins recovery", "exit(0)"),
    "get_ipython from builtins": Attack("builtins recovery", "get_ipython().system('touch CANARY')"),
    "display hook javascript": Attack(
        "builtins recovery",
        "class X:\n    def _repr_javascript_(self):\n        return 'Jupyter.notebook.kernel.execute(1)'",
    ),
    "display hook set later": Attack(
        "builtins recovery", "class X: pass\nX._repr_html_ = lambda self: '<script></script>'"
    ),
    "display hook via type()": Attack("builtins recovery", "X = type('X', (), {'_repr_html_': lambda self: ''})"),
    # --- format strings
    "format field path": Attack("format strings", "'{0.__class__.__bases__}'.format(1)"),
    "format globals leak": Attack("format strings", "def f(): pass\n'{0.__globals__}'.format(f)"),
    "format_map": Attack("format strings", "'{a.__class__}'.format_map({'a': 1})"),
    "str.format unbound": Attack("format strings", "str.format('{0.__class__}', 1)"),
    "format bound method reference": Attack("format strings", "f = '{0.__init__.__globals__}'.format\nf(print)"),
    "format nested spec": Attack("format strings", "'{0:{1.__class__}}'.format(1, 2)"),
    "format via getattr": Attack("format strings", "getattr('{0.__class__}', 'format')(1)"),
    "string.Formatter": Attack(
        "format strings", "import string\nstring.Formatter().format('{0.__class__}', 1)", ("string",)
    ),
    # --- frames, generators, tracebacks
    "generator frame": Attack("frames", "def g():\n    yield 1\nx = g()\nx.gi_frame.f_back.f_globals"),
    "traceback frame": Attack("frames", "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame"),
    "coroutine frame": Attack("frames", "async def c(): pass\nco = c()\nco.cr_frame"),
    "frame via getattr": Attack("frames", "def g():\n    yield 1\ngetattr(g(), 'gi_frame')"),
    "sys._getframe": Attack("frames", "import sys\nsys._getframe().f_globals", ("sys",)),
    "sys.modules": Attack("frames", "import sys\nsys.modules['os'].system('touch CANARY')", ("sys",)),
    "inspect": Attack("frames", "import inspect\ninspect.currentframe()", ("inspect",)),
    "gc objects": Attack("frames", "import gc\ngc.get_objects()", ("*",)),
    # --- authorized-module abuse
    "numpy.load pickle": Attack(
        "authorized module", "import numpy as np\nnp.load('x.npy', allow_pickle=True)", ("numpy",)
    ),
    "numpy ctypeslib": Attack("authorized module", "import numpy as np\nnp.ctypeslib.ctypes", ("numpy",)),
    "numpy env file": Attack(
        "authorized module", "import numpy as np\nnp.fromfile('/proc/self/environ', dtype='u1').tobytes()", ("numpy",)
    ),
    "numpy as_strided": Attack(
        "authorized module",
        "import numpy as np\nnp.lib.stride_tricks.as_strided(np.zeros(1), shape=(10**6,), strides=(8,)).sum()",
        ("numpy",),
    ),
    "numpy memmap of process memory": Attack(
        "authorized module", "import numpy as np\nnp.memmap('/proc/self/mem', dtype='u1', mode='r+')", ("numpy",)
    ),
    "pandas read_pickle": Attack("authorized module", "import pandas as pd\npd.read_pickle('x.pkl')", ("pandas",)),
    "pandas query scope trick": Attack(
        "authorized module",
        "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.query('@os.system(\"touch CANARY\") == 0')",
        ("pandas",),
    ),
    "pandas eval": Attack("authorized module", "import pandas as pd\npd.eval('1 + 1')", ("pandas",)),
    "pandas env file": Attack(
        "authorized module", "import pandas as pd\npd.read_csv('/proc/self/environ')", ("pandas",)
    ),
    "os authorized: system": Attack("authorized module", "import os\nos.system('touch CANARY')", ("os",)),
    "os authorized: environ": Attack("authorized module", "import os\nprint(os.environ)", ("os",)),
    "os authorized: getenv": Attack("authorized module", "import os\nos.getenv('NBAGENT_SANDBOX_SECRET')", ("os",)),
    "os authorized: open environ": Attack("authorized module", "import os\nos.open('/proc/self/environ', 0)", ("os",)),
    "asyncio subprocess": Attack(
        "authorized module", "import asyncio\nasyncio.create_subprocess_shell('touch CANARY')", ("asyncio",)
    ),
    "asyncio kernel loop callback": Attack(
        "authorized module", "import asyncio\nasyncio.get_event_loop().call_later(1, print)", ("asyncio",)
    ),
    "typing.get_type_hints eval": Attack(
        "authorized module",
        "from __future__ import annotations\ndef f(x: print('x')): pass",
        ("typing",),
    ),
    # --- filesystem
    "open without io": Attack("filesystem", "open('/etc/passwd').read()"),
    "open secret with io": Attack("filesystem", "open('/proc/self/environ').read()", ("io",)),
    "open ssh key with io": Attack("filesystem", "open('~/.ssh/id_rsa'.replace('~', '/root')).read()", ("io",)),
    "pathlib not granted": Attack("filesystem", "import pathlib\npathlib.Path('CANARY').touch()"),
    "shutil not granted": Attack("filesystem", "import shutil\nshutil.rmtree('/tmp/x')"),
    # --- process
    "multiprocessing": Attack("process", "import multiprocessing", ("*",)),
    "pty": Attack("process", "import pty\npty.spawn('sh')", ("*",)),
    "os.popen": Attack("process", "import os\nos.popen('touch CANARY')", ("os",)),
    "os.fork": Attack("process", "import os\nos.fork()", ("os",)),
    "threading": Attack("process", "import threading\nthreading.Thread(target=print).start()", ("threading",)),
    # --- network
    "socket": Attack("network", "import socket\nsocket.create_connection(('example.com', 80))"),
    "urllib": Attack("network", "import urllib.request\nurllib.request.urlopen('http://example.com')"),
    "http.client": Attack("network", "import http.client"),
    # --- resource exhaustion
    "string repeat": Attack("resource exhaustion", "'a' * 10**10"),
    "list repeat": Attack("resource exhaustion", "[0] * 10**10"),
    "huge power": Attack("resource exhaustion", "10**10**8"),
    "pow builtin": Attack("resource exhaustion", "pow(10, 10**8)"),
    "left shift": Attack("resource exhaustion", "1 << 10**12"),
    "in-place repeat": Attack("resource exhaustion", "s = 'ab'\ns *= 10**10"),
    "factorial": Attack("resource exhaustion", "import math\nmath.factorial(10**8)"),
    "operator.mul": Attack("resource exhaustion", "import operator\noperator.mul('a', 10**10)", ("operator",)),
    "dunder mul": Attack("resource exhaustion", "'a'.__mul__(10**10)"),
    "lying __index__": Attack(
        "resource exhaustion", "class N:\n    def __index__(self):\n        return 10**10\n'a' * N()"
    ),
    "lying __len__": Attack(
        "resource exhaustion", "class L(list):\n    def __len__(self):\n        return 0\nL([0]) * 10**10"
    ),
    "lying bit_length": Attack(
        "resource exhaustion", "class I(int):\n    def bit_length(self):\n        return 1\nI(10) ** 10**8"
    ),
    "endless iterator consumed in C": Attack(
        "resource exhaustion",
        "import itertools\nsum(itertools.count())",
        expect="error",
        options={"max_operations": 10**6},
    ),
    "endless repeat into a list": Attack(
        "resource exhaustion",
        "import itertools\nlist(itertools.repeat(1))",
        expect="error",
        options={"max_operations": 10**6},
    ),
    # --- state poisoning
    "rebind tool": Attack("state poisoning", "final_answer = lambda x: x"),
    "def tool": Attack("state poisoning", "def final_answer(x):\n    return x"),
    "class tool": Attack("state poisoning", "class final_answer: pass"),
    "import as tool": Attack("state poisoning", "import math as final_answer"),
    "except as tool": Attack("state poisoning", "try:\n    1/0\nexcept Exception as final_answer:\n    pass"),
    "for target tool": Attack("state poisoning", "for final_answer in range(2): pass"),
    "with target tool": Attack(
        "state poisoning", "import contextlib\nwith contextlib.nullcontext() as final_answer: pass", ("contextlib",)
    ),
    "walrus tool": Attack("state poisoning", "(final_answer := 1)"),
    "del tool": Attack("state poisoning", "del final_answer"),
    "global tool": Attack("state poisoning", "def f():\n    global final_answer\n    final_answer = 1\nf()"),
    "parameter tool": Attack("state poisoning", "def f(final_answer): return final_answer"),
    "match capture tool": Attack("state poisoning", "match 1:\n    case final_answer: pass"),
    "tool attribute set": Attack("state poisoning", "final_answer.forward = print"),
    "tool setattr": Attack("state poisoning", "setattr(search, 'description', 'evil')"),
    "tool dict": Attack("state poisoning", "search.__dict__"),
    "tool inputs mutation": Attack(
        "state poisoning", "search.inputs['query'] = 'evil'\nsearch.forward", expect="refused"
    ),
    "module attribute": Attack("state poisoning", "import math\nmath.pi = 3"),
    "module function": Attack("state poisoning", "import random\nrandom.random = lambda: 4"),
    "library class": Attack("state poisoning", "import collections\ncollections.Counter.most_common = None"),
    "sandbox limits via sys": Attack("state poisoning", "import sys\nsys.setrecursionlimit(10**6)", ("sys",)),
    "settrace": Attack("state poisoning", "import sys\nsys.settrace(None)", ("sys",)),
    "del method runs later": Attack(
        "state poisoning", "class D:\n    def __del__(self):\n        print('later')\nd = D()"
    ),
    "del via type()": Attack("state poisoning", "D = type('D', (), {'__del__': lambda self: print('later')})"),
    "weakref finalize": Attack("state poisoning", "import weakref", ("weakref",)),
    "atexit": Attack("state poisoning", "import atexit\natexit.register(print)", ("*",)),
    "signal handler": Attack("state poisoning", "import signal\nsignal.signal(2, print)", ("*",)),
    # --- exception tricks
    "final answer swallowed": Attack(
        "exception tricks",
        "try:\n    final_answer('ok')\nexcept BaseException:\n    print('swallowed')\nprint('continued')",
        expect="final",
    ),
    "final answer suppressed": Attack(
        "exception tricks",
        "import contextlib\nwith contextlib.suppress(BaseException):\n    final_answer('ok')\nfor i in range(3):\n    print('continued')",
        ("contextlib",),
        expect="final",
    ),
    "final answer finally return": Attack(
        "exception tricks",
        "def f():\n    try:\n        final_answer('ok')\n    finally:\n        return 2\nf()\nf()\nprint('continued')",
        expect="final",
    ),
    "SystemExit": Attack("exception tricks", "raise SystemExit(1)", expect="error"),
    "KeyboardInterrupt raised by code": Attack("exception tricks", "raise KeyboardInterrupt", expect="error"),
    "GeneratorExit": Attack("exception tricks", "raise GeneratorExit", expect="error"),
    "timeout swallowed": Attack(
        "exception tricks",
        "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass",
        expect="error",
        options={"timeout_seconds": 0.5},
    ),
    "traceback object": Attack("exception tricks", "try:\n    1/0\nexcept Exception as e:\n    tb = e.__traceback__"),
}


class FakeTool:
    name = "search"
    description = "Searches."
    inputs = {"query": {"type": "string", "description": "what"}}
    output_type = "string"

    def __call__(self, query: str) -> str:
        return f"results for {query}"


@pytest.fixture
def canary(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("NBAGENT_SANDBOX_SECRET", SECRET)
    return tmp_path / "pwned"


def test_the_suite_covers_every_category() -> None:
    assert len(ATTACKS) >= 50
    categories = {attack.category for attack in ATTACKS.values()}
    assert categories == {
        "import bypass", "attribute walking", "builtins recovery", "format strings", "frames", "authorized module",
        "filesystem", "process", "network", "resource exhaustion", "state poisoning", "exception tricks",
    }  # fmt: skip


@pytest.mark.parametrize("kind", list(EXECUTORS))
@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_is_refused_and_kernel_stays_fine(name: str, kind: str, canary: Any) -> None:
    attack = ATTACKS[name]
    tool = FakeTool()
    namespace: dict[str, Any] = {"__name__": "__main__", "precious": [1, 2, 3]}
    options = {"timeout_seconds": 5, **attack.options}
    executor = EXECUTORS[kind](additional_authorized_imports=list(attack.imports), namespace=namespace, **options)
    executor.send_tools({"search": tool})
    pi, rand = math.pi, random.random
    code = attack.code.replace("CANARY", str(canary))

    outcome: Any
    try:
        outcome = executor(code)
    except ExecutionError as exc:
        outcome = exc
    if attack.expect == "refused":
        assert isinstance(outcome, PolicyError), f"{name}: expected a policy refusal, got {outcome!r}"
        assert str(outcome).startswith("Error on line"), str(outcome)
    elif attack.expect == "error":
        assert isinstance(outcome, ExecutionError), f"{name}: expected an error, got {outcome!r}"
    else:
        assert not isinstance(outcome, ExecutionError), f"{name}: {outcome}"
        assert outcome.is_final_answer and outcome.output == "ok"
        assert "continued" not in outcome.logs

    text = f"{outcome} {getattr(outcome, 'logs', '')} {getattr(outcome, 'output', '')!r}"
    assert SECRET not in text
    assert not os.path.exists(canary), "the attack created a file"
    assert tool.description == "Searches." and tool.inputs["query"]["type"] == "string"
    assert math.pi == pi and random.random is rand
    assert namespace["precious"] == [1, 2, 3]
    assert executor("precious + [4]").output == [1, 2, 3, 4]  # the next call works
    assert executor("search('x')").output == "results for x"
    if kind == "isolated":
        executor.close()
