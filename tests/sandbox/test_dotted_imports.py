"""A dotted import granted (issue 33 item 3): authorizing `urllib.request` makes `import urllib.request` work, its
parent `urllib` is bound only as the way down to it (nothing else of `urllib` is granted by that), and the advice on a
refused import names the executor the code runs in. Through both public executors, guards on."""

from __future__ import annotations

import pytest

from nbagent.sandbox import IsolatedPythonExecutor, LocalPythonExecutor
from nbagent.sandbox.errors import InterpreterError

EXECUTORS = {"local": LocalPythonExecutor, "isolated": IsolatedPythonExecutor}


@pytest.fixture(params=list(EXECUTORS), scope="module")
def make(request):
    made = []

    def make_one(imports):
        executor = EXECUTORS[request.param](additional_authorized_imports=imports)
        executor.send_tools({})
        made.append(executor)
        return executor

    yield request.param, make_one
    for executor in made:
        getattr(executor, "close", lambda: None)()


def run(executor, code):
    return executor(code).output


def test_a_granted_submodule_imports_with_its_parents_dotted_name(make):
    _, make_one = make
    executor = make_one(["urllib.request", "xml.etree.ElementTree"])
    assert run(executor, "import urllib.request\nurllib.request.Request('https://example.org').host") == "example.org"
    assert run(executor, "import xml.etree.ElementTree\nxml.etree.ElementTree.fromstring('<a>1</a>').text") == "1"
    assert run(executor, "import urllib.request as r\nr.__name__") == "urllib.request"


def test_from_the_parent_import_the_granted_submodule(make):
    # `from urllib import request` is the same import as `import urllib.request`: granted by `urllib.request` alone
    _, make_one = make
    executor = make_one(["urllib.request", "xml.etree.ElementTree"])
    assert run(executor, "from urllib import request\nrequest.Request('https://example.org').host") == "example.org"
    assert run(executor, "from xml.etree import ElementTree as ET\nET.fromstring('<a>2</a>').text") == "2"
    for other in ("from urllib import parse", "from urllib import request, parse"):
        with pytest.raises(InterpreterError, match="Import of urllib is not allowed"):
            run(executor, other)


def test_the_parent_is_only_the_way_down_not_a_grant(make):
    _, make_one = make
    executor = make_one(["urllib.request"])
    run(executor, "import urllib.request")
    for attack in ("urllib.parse.quote('a b')", "import urllib.parse", "import urllib\nurllib.parse", "import urllib"):
        with pytest.raises(InterpreterError, match="not (allowed|granted)"):
            run(executor, attack)


def test_the_advice_names_the_executor_in_use(make):
    kind, make_one = make
    executor = make_one([])
    with pytest.raises(InterpreterError) as refused:
        run(executor, "import urllib.request")
    message = str(refused.value)
    name = {"local": "LocalPythonExecutor", "isolated": "IsolatedPythonExecutor"}[kind]
    other = {"local": "IsolatedPythonExecutor", "isolated": "LocalPythonExecutor"}[kind]
    assert name in message and other not in message
    assert "--imports urllib.request" in message  # the dotted name, which is what works now
